/// <reference types="vitest/config" />
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const webDir = fileURLToPath(new URL('.', import.meta.url));

/**
 * The Switchboard web UI. `npm run web` serves it on 5173 (the spec's port) and it talks to the hub
 * on port 8000 of the same host; `SWITCHBOARD_API_URL` points it elsewhere. `npm run build:web`
 * writes dist/web, which the hub serves at `/` (then the API is the page's own origin).
 */
export default defineConfig({
  root: webDir,
  plugins: [react()],
  define: {
    __SWITCHBOARD_API_URL__: JSON.stringify(process.env.SWITCHBOARD_API_URL ?? ''),
    __SWITCHBOARD_DOCS_URL__: JSON.stringify(process.env.SWITCHBOARD_DOCS_URL ?? ''),
  },
  server: { port: 5173, strictPort: true, host: true },
  preview: { port: 5173, strictPort: true },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  test: {
    root: webDir,
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
  },
});
