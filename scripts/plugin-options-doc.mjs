// Writes docs/plugin-options.md from the built-in plugins' manifests (run after a build: `npm run build`).
import { writeFileSync } from "node:fs";
import { pluginOptionsDoc } from "../dist/core/options/plugin-options-doc.js";
import { builtinManifests } from "../dist/host/plugins/plugin-manifests.js";

const manifests = await builtinManifests(new URL("../dist/plugins", import.meta.url).pathname);
writeFileSync(new URL("../docs/plugin-options.md", import.meta.url), pluginOptionsDoc(manifests.map((manifest) => ({ manifest, source: "built-in" }))));
