// Writes docs/options.md from the option table (run after a build: `npm run build`).
import { writeFileSync } from "node:fs";
import { optionsDoc } from "../dist/core/options/options-doc.js";

writeFileSync(new URL("../docs/options.md", import.meta.url), optionsDoc());
