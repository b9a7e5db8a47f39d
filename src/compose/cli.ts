#!/usr/bin/env node
/**
 * The `switchboard` command's entry: the CLI (src/cli) with the one part of it that needs the
 * composition root — the offline hub `workflows test` runs its cases on. That hub is loaded only
 * when a test run asks for it, so every other command starts as fast as before.
 */
import { run } from '../cli/index';

if (require.main === module) {
  void run(process.argv.slice(2), process.env, {
    workflowTests: {
      startLocal: async (options) => (await import('./workflow-test-hub.js')).startWorkflowTestHub(options),
    },
  }).then((code) => {
    process.exitCode = code;
  });
}
