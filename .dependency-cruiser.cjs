/**
 * The import graph of src/ (npm run lint): no module may reach itself again through its imports,
 * type-only imports included, since a circle makes the load order decide what a module sees.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module reaches itself again through its imports: move the shared piece to a module of its own.',
      from: {path: '^src/'},
      to: {circular: true},
    },
  ],
  options: {
    doNotFollow: {path: 'node_modules'},
    exclude: {path: '^(dist|node_modules)/'},
    // Type-only imports (`import type`) are part of the graph: they are circles to a reader too.
    tsPreCompilationDeps: true,
    tsConfig: {fileName: 'tsconfig.json'},
  },
}
