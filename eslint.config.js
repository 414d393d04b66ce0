import js from '@eslint/js'
import stylistic from '@stylistic/eslint-plugin'
import globals from 'globals'
import tseslint from 'typescript-eslint'

// Syntax rules only: no type-aware rules, so that the lint stays seconds long inside `npm test`.
export default tseslint.config(
  {ignores: ['dist/', 'coverage/', 'audit-trail-data/', '.bench-data/']},
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {globals: globals.node},
    plugins: {'@stylistic': stylistic},
    rules: {
      // Prettier breaks code at 120 columns but leaves comments, strings and templates as written.
      '@stylistic/max-len': ['error', {code: 120, tabWidth: 2, comments: 120}],
      // A leading underscore names a value kept on purpose (a destructured slot, a callback's arity).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true},
      ],
      // RFC 8259 and C2SP signed notes forbid control characters: the code matches them on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // A function or file a reader takes in at once (docs/design.md, Layout): blank lines and comments not counted.
    files: ['src/**'],
    rules: {
      'max-lines-per-function': ['error', {max: 60, skipBlankLines: true, skipComments: true}],
      'max-lines': ['error', {max: 400, skipBlankLines: true, skipComments: true}],
    },
  },
  {
    // Tests, benchmarks and scripts read untyped JSON bodies; src/ keeps the rule.
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: {'@typescript-eslint/no-explicit-any': 'off'},
  },
  {files: ['public/**/*.js'], languageOptions: {globals: globals.browser}},
  {files: ['**/*.cjs'], languageOptions: {sourceType: 'commonjs'}},
)
