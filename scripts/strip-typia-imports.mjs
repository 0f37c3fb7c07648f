// After the build: removes `import typia from "typia";` from compiled files where typia's
// transform replaced every use of it with generated code. TypeScript keeps the import (it saw
// `typia.createValidate<T>()`, a value use, before the transform ran), and loading it costs a
// start some 95 modules (typia's index pulls in all of @typia/interface) for nothing.
// A file that still names `typia.` keeps its import.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const IMPORT = /^import typia from "typia";\n/m;
const dist = new URL("../dist", import.meta.url).pathname;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith(".js")) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, "utf8");
  if (!IMPORT.test(text)) continue;
  const rest = text.replace(IMPORT, "");
  if (rest.includes("typia.")) continue;
  writeFileSync(file, rest);
}
