// Lint rules of the frontend. The architecture (bulletproof-react), one direction only:
//
//   config  <-  lib  <-  api  <-  components  <-  features/<name>  <-  app
//                 ^-- testing (test helpers; imported by tests only)
//
// Each layer imports only the layers to its left (and itself); a feature never imports another
// feature (compose them in src/app); nothing imports src/app. `import/no-restricted-paths`
// enforces the arrows on resolved files (relative imports too), `import/no-cycle` forbids
// cycles between modules, also inside a layer. Tests may also import src/testing.
import { readdirSync } from 'node:fs';

import js from '@eslint/js';
import checkFile from 'eslint-plugin-check-file';
import importPlugin from 'eslint-plugin-import';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const features = readdirSync(new URL('./src/features', import.meta.url), {
  withFileTypes: true,
})
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** The shared layers, lowest first; src/features and src/app come above them. */
const layers = ['config', 'lib', 'api', 'components'];
const above = (layer) => [...layers.slice(layers.indexOf(layer) + 1), 'features', 'app', 'testing'];

const layerZones = (testing) => [
  ...layers.map((layer) => ({
    target: `./src/${layer}`,
    from: above(layer)
      .filter((dir) => !(testing && dir === 'testing'))
      .map((dir) => `./src/${dir}`),
    message: `src/${layer} imports only the layers below it: ${layers.slice(0, layers.indexOf(layer)).join(', ') || 'none'}`,
  })),
  {
    target: './src/testing',
    from: ['./src/api', './src/components', './src/features', './src/app'],
    message: 'test helpers build on src/lib and src/config only',
  },
  ...features.map((feature) => ({
    target: `./src/features/${feature}`,
    from: ['./src/features', './src/app', ...(testing ? [] : ['./src/testing'])],
    except: [`./${feature}`],
    message: 'features never import each other (compose them in src/app), nor the app',
  })),
];

const restrictedPaths = (testing) => ['error', { basePath: import.meta.dirname, zones: layerZones(testing) }];

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'src/lib/api/schema.ts', 'test-results'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { ecmaVersion: 2023, globals: globals.browser },
    settings: {
      'import/resolver': { typescript: { project: './tsconfig.app.json' } },
      'import/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
    },
    plugins: {
      'react-hooks': reactHooks,
      import: importPlugin,
      'check-file': checkFile,
      'jsx-a11y': jsxA11y,
    },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...jsxA11y.flatConfigs.recommended.rules,
      'jsx-a11y/no-autofocus': 'off',
      'import/order': [
        'error',
        {
          groups: ['builtin', 'external', 'internal', 'parent', 'sibling', 'index'],
          pathGroups: [{ pattern: '@/**', group: 'internal' }],
          'newlines-between': 'always',
          alphabetize: { order: 'asc', caseInsensitive: true },
        },
      ],
      'import/no-cycle': ['error', { ignoreExternal: true }],
      'import/no-restricted-paths': restrictedPaths(false),
      'check-file/filename-naming-convention': [
        'error',
        { 'src/**/*.{ts,tsx}': 'KEBAB_CASE' },
        { ignoreMiddleExtensions: true },
      ],
      'check-file/folder-naming-convention': ['error', { 'src/**/': 'KEBAB_CASE' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    // Leave a feature through @/ imports of shared code, not ../../ (the zones above still
    // apply to what such an import resolves to).
    files: ['src/features/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\.\\./\\.\\./', message: 'leave a feature through @/ imports of shared code only' }] },
      ],
    },
  },
  {
    files: ['src/**/*.test.{ts,tsx}', 'src/testing/**'],
    rules: { 'import/no-restricted-paths': restrictedPaths(true) },
  },
  {
    files: ['vite.config.ts', 'eslint.config.js'],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2023, globals: { ...globals.node, ...globals.browser } },
    rules: { 'no-console': 'off' },
  },
  {
    // The Playwright tests run in Node (their `page.evaluate` callbacks in the browser);
    // fixtures call `use`, which is no React hook.
    files: ['e2e/**/*.ts', 'playwright.config.ts'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      'no-console': 'off',
      'react-hooks/rules-of-hooks': 'off',
    },
  },
);
