// ESLint (flat config): typescript-eslint's recommended rules; formatting is prettier's.
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', 'coverage/', '*.js', '*.mjs'] },
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      // JupyterLab's command arguments and JSON answers are untyped at the edges
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }]
    }
  }
);
