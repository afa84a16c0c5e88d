// JupyterLab's jest preset (jsdom, babel for the ES modules it ships), TypeScript by ts-jest.
const jestJupyterLab = require('@jupyterlab/testutils/lib/jest-config');

const esModules = [
  '@codemirror/',
  '@jupyter/',
  '@jupyterlab/',
  '@lumino/',
  '@microsoft/',
  'exenv-es6',
  'lib0',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y\\-protocols',
  'y\\-websocket',
  'yjs'
].join('|');

const base = jestJupyterLab(__dirname);

module.exports = {
  moduleFileExtensions: base.moduleFileExtensions,
  moduleNameMapper: base.moduleNameMapper,
  preset: base.preset,
  testEnvironment: base.testEnvironment ?? 'jsdom',
  setupFilesAfterEnv: base.setupFilesAfterEnv,
  setupFiles: base.setupFiles,
  testPathIgnorePatterns: base.testPathIgnorePatterns,
  transform: {
    ...base.transform,
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }]
  },
  testRegex: 'test/.*\\.spec\\.ts$',
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
