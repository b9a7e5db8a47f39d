import path from 'node:path';
import { Command, CommanderError, type Option } from 'commander';
import { run } from '../../src/cli/index';
import { EXIT } from '../../src/cli/exit-codes';
import { cell, code, generatedBanner, table } from './markdown';
import { repoRoot } from './repo';
import { propertyDocs } from './ts-docs';

/**
 * The CLI's own command tree, as commander holds it. `run()` in src/cli/index.ts builds the program
 * and parses at once; we let it build, catch the program at its parse call, and stop there (with
 * the exit code commander uses for --help, so nothing is printed). Every command registered on the
 * program shows up here without this file knowing its name.
 */
export async function cliProgram(): Promise<Command> {
  const original = Command.prototype.parseAsync;
  let captured: Command | null = null;
  Command.prototype.parseAsync = function capture(this: Command) {
    captured = this;
    return Promise.reject(new CommanderError(0, 'docs.capture', ''));
  };
  try {
    await run([], { SWITCHBOARD_CONFIG_DIR: '/nonexistent' });
  } finally {
    Command.prototype.parseAsync = original;
  }
  if (!captured) throw new Error('docs generator: the CLI did not parse a commander program');
  return captured;
}

function commandPath(command: Command): string[] {
  const names: string[] = [];
  for (let current: Command | null = command; current; current = current.parent) names.unshift(current.name());
  return names;
}

function leafCommands(command: Command): Command[] {
  const visible = command.commands.filter((child) => !(child as unknown as { _hidden?: boolean })._hidden);
  return visible.flatMap((child) => (child.commands.length > 0 ? [child, ...leafCommands(child)] : [child]));
}

function optionRow(option: Option): string[] {
  const notes: string[] = [];
  if (option.envVar) notes.push(`env ${code(option.envVar)}`);
  if (option.defaultValue !== undefined && option.defaultValue !== false) notes.push(`default ${code(String(option.defaultValue))}`);
  if (option.argChoices) notes.push(`one of ${option.argChoices.map(code).join(', ')}`);
  return [code(option.flags), cell(option.description) + (notes.length ? ` (${notes.join('; ')})` : '')];
}

function commandSection(command: Command): string {
  const fullName = commandPath(command).join(' ');
  const lines = [`## ${fullName}`, '', cell(command.description()), '', '```', `${fullName} ${command.usage()}`.trim(), '```', ''];
  if (command.commands.length > 0) {
    lines.push(`Subcommands: ${command.commands.map((child) => `[${child.name()}](#${[...commandPath(child)].join('-').toLowerCase()})`).join(', ')}.`, '');
    return lines.join('\n');
  }
  const args = command.registeredArguments;
  if (args.length > 0) {
    lines.push(
      table(
        ['Argument', 'Meaning'],
        args.map((argument) => [code(argument.required ? `<${argument.name()}>` : `[${argument.name()}]`), cell(argument.description || '—')]),
      ),
      '',
    );
  }
  const options = command.options.filter((option) => !option.hidden);
  if (options.length > 0) lines.push(table(['Option', 'Meaning'], options.map(optionRow)), '');
  return lines.join('\n');
}

export async function cliReferencePage(root = repoRoot()): Promise<string> {
  const program = await cliProgram();
  const exitDocs = propertyDocs(path.join(root, 'src/cli/exit-codes.ts'), 'EXIT');
  const commands = leafCommands(program);
  return [
    generatedBanner("the CLI's own commander definitions (src/cli/) and src/cli/exit-codes.ts"),
    '# CLI commands',
    '',
    `\`${program.name()}\`: ${cell(program.description())}. Run it as \`npm run cli -- <command>\` after`,
    '`npm run build`, or `npm link` once and then `switchboard <command>`. Every command takes `--help`.',
    '',
    table(
      ['Command', 'Does'],
      commands.map((command) => {
        const name = commandPath(command).join(' ');
        return [`[\`${name}\`](#${name.replace(/ /g, '-').toLowerCase()})`, cell(command.description())];
      }),
    ),
    '',
    table(['Global option', 'Meaning'], program.options.map(optionRow)),
    '',
    '## Exit status',
    '',
    table(
      ['Status', 'Name', 'Means'],
      Object.entries(EXIT).map(([name, value]) => {
        const doc = exitDocs.get(name);
        if (!doc) throw new Error(`docs generator: exit code ${name} in src/cli/exit-codes.ts has no TSDoc comment`);
        return [String(value), code(name), cell(doc)];
      }),
    ),
    '',
    ...commands.map(commandSection),
  ].join('\n');
}
