import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'src/generated/', '.phaselog/', 'bench/results/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // The web UI runs in a browser.
    files: ['web/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['src/status/**', 'src/inventory/**', 'src/history/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '../kube/*',
                '../store/*',
                '../queue/*',
                '../pubsub/*',
                '../services/*',
                '../graphql/*',
                '../cli/*',
                '../config*',
              ],
              message: 'The pure core imports nothing from the rest of src/.',
            },
          ],
        },
      ],
    },
  },
  // Layout is Prettier's (npm run format); ESLint keeps to correctness.
  prettier,
);
