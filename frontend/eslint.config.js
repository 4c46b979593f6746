// Lint rules of the frontend. The architecture rule (bulletproof-react): src/app composes
// features; a feature never imports another feature; shared code (api, components, config,
// lib, testing, utils) never imports a feature or the app.
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

const shared = ['api', 'components', 'config', 'lib', 'testing', 'utils'];

const fromApp = { regex: '^@/app(/|$)', message: 'only src/app imports the app layer' };

/** A feature imports itself, shared code and packages: never another feature, never the app. */
const featureRules = features.map((feature) => ({
  files: [`src/features/${feature}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^@/features/(?!${feature}/)`,
            message: 'features never import each other: compose them in src/app',
          },
          {
            regex: '^\\.\\./\\.\\./',
            message: 'leave a feature through @/ imports of shared code only',
          },
          fromApp,
        ],
      },
    ],
  },
}));

/** Shared code never imports a feature or the app. */
const sharedRules = {
  files: shared.map((dir) => `src/${dir}/**/*.{ts,tsx}`),
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          { regex: '^@/features(/|$)', message: 'shared code never imports features' },
          fromApp,
        ],
      },
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'src/lib/api/schema.ts', 'test-results'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { ecmaVersion: 2023, globals: globals.browser },
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
  ...featureRules,
  sharedRules,
  {
    files: ['e2e/**/*.mjs', 'vite.config.ts', 'eslint.config.js'],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2023, globals: { ...globals.node, ...globals.browser } },
    rules: { 'no-console': 'off' },
  },
);
