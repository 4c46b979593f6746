/// <reference types="vitest/config" />
import { fileURLToPath, URL } from 'node:url';

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// In dev, the API runs on 127.0.0.1:8000 (`make run`); Vite proxies /api to it, so the
// browser sees one origin just as when the API serves the built UI.
const apiTarget = process.env.SLICEPORTAL_API_URL ?? 'http://127.0.0.1:8000';

export default defineConfig({
  plugins: [react()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
  build: {
    outDir: 'dist',
    sourcemap: true,
    chunkSizeWarningLimit: 800,
  },
  test: {
    globals: true,
    environment: 'jsdom',
    setupFiles: ['./src/testing/setup-tests.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    css: false,
    restoreMocks: true,
    // Two cores shared with a backend and a browser in the full test run: be patient.
    testTimeout: 20_000,
    // Node's fetch needs absolute URLs; the app uses same-origin paths in the browser.
    env: { VITE_API_BASE_URL: 'http://portal.test' },
  },
});
