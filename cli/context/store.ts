/**
 * The contexts stored in the client's configuration folder, laid out as the Docker CLI lays out
 * its own (cli/context/store), so that `engine --config ~/.docker` reads Docker's contexts and
 * the Docker CLI reads ours:
 *   contexts/meta/<sha256 of the name>/meta.json
 *   contexts/tls/<sha256 of the name>/<endpoint>/{ca,cert,key}.pem
 * Unlike the Docker CLI's (0755 and 0644 for the metadata) every folder here is 0700 and every
 * file 0600: the TLS keys are in it. Files are replaced through a rename, so a crash leaves the
 * old one. The "default" context is not stored (contexts.ts adds it).
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { pathError } from "../archive/go-errors.js";
import { marshalMetadata, parseMetadata, type ContextMetadata } from "./metadata.js";

/** TLS files of a context: by endpoint, by file name ("ca.pem"), their bytes. */
export type TlsData = Record<string, Record<string, Buffer>>;

/** A context that is not there; the message is the Docker CLI's. */
export class ContextNotFound extends Error {}

const META_FILE = "meta.json";

/** The folder name of a context: the hex sha256 of its name (names may hold what a path cannot). */
const contextId = (name: string): string => createHash("sha256").update(name).digest("hex");

export class ContextStore {
  readonly metaRoot: string;
  readonly tlsRoot: string;

  constructor(configDir: string) {
    this.metaRoot = join(configDir, "contexts", "meta");
    this.tlsRoot = join(configDir, "contexts", "tls");
  }

  metaDir(name: string): string {
    return join(this.metaRoot, contextId(name));
  }

  tlsDir(name: string): string {
    return join(this.tlsRoot, contextId(name));
  }

  get(name: string): ContextMetadata {
    const file = join(this.metaDir(name), META_FILE);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new ContextNotFound(`context "${name}": context not found: ${pathError("open", file, e).message}`);
      throw new Error(`context "${name}": ${pathError("open", file, e).message}`);
    }
    return parseMetadata(text, file);
  }

  /** Whether the context's metadata folder is there (what `rm` checks). */
  exists(name: string): boolean {
    try {
      statSync(this.metaDir(name));
      return true;
    } catch {
      return false;
    }
  }

  /** Every stored context, in no order; folders below folders count, as the Docker CLI walks them. */
  list(): ContextMetadata[] {
    const found: ContextMetadata[] = [];
    const walk = (dir: string, depth: number) => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
        throw e;
      }
      for (const entry of entries) {
        if (!entry.isDirectory() || depth > 8) continue;
        const sub = join(dir, entry.name);
        const file = join(sub, META_FILE);
        let text: string | undefined;
        try {
          text = readFileSync(file, "utf8");
        } catch {
          // no meta.json here: not a context (maybe a folder of them)
        }
        if (text !== undefined) {
          try {
            found.push(parseMetadata(text, file));
          } catch (e) {
            throw new Error(`failed to read metadata: ${(e as Error).message}`);
          }
        }
        walk(sub, depth + 1);
      }
    };
    walk(this.metaRoot, 0);
    return found;
  }

  write(meta: ContextMetadata): void {
    const dir = this.metaDir(meta.name);
    privateDir(dir);
    privateFile(join(dir, META_FILE), marshalMetadata(meta));
  }

  remove(name: string): void {
    try {
      rmSync(this.metaDir(name), { recursive: true, force: true });
    } catch (e) {
      throw new Error(`failed to remove context ${name}: failed to remove metadata: ${(e as Error).message}`);
    }
    try {
      rmSync(this.tlsDir(name), { recursive: true, force: true });
    } catch (e) {
      throw new Error(`failed to remove context ${name}: failed to remove TLS data: ${(e as Error).message}`);
    }
  }

  /** The TLS file names of each endpoint, sorted; hidden files are left out, as the CLI leaves them. */
  tlsFiles(name: string): Record<string, string[]> {
    const dir = this.tlsDir(name);
    const out: Record<string, string[]> = {};
    let endpoints;
    try {
      endpoints = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return out;
      throw new Error(`failed to list TLS files for context ${name}: ${(e as Error).message}`);
    }
    for (const ep of endpoints.filter((d) => d.isDirectory()).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      out[ep.name] = readdirSync(join(dir, ep.name), { withFileTypes: true })
        .filter((f) => !f.isDirectory() && !f.name.startsWith("."))
        .map((f) => f.name)
        .sort();
    }
    return out;
  }

  readTls(name: string, endpoint: string, file: string): Buffer {
    try {
      return readFileSync(join(this.tlsDir(name), endpoint, file));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new Error(`TLS data for ${name}/${endpoint}/${file} does not exist`);
      throw new Error(`failed to read TLS data for endpoint ${endpoint}: ${(e as Error).message}`);
    }
  }

  /** Every endpoint's TLS files of the context. */
  readAllTls(name: string): TlsData {
    const data: TlsData = {};
    for (const [ep, files] of Object.entries(this.tlsFiles(name))) {
      data[ep] = {};
      for (const f of files) data[ep][f] = this.readTls(name, ep, f);
    }
    return data;
  }

  /** Replaces all the context's TLS files with `data`. */
  resetTls(name: string, data: TlsData): void {
    rmSync(this.tlsDir(name), { recursive: true, force: true });
    for (const [ep, files] of Object.entries(data)) this.writeEndpointTls(name, ep, files);
  }

  /** Replaces one endpoint's TLS files (none: removes them). */
  resetEndpointTls(name: string, endpoint: string, files: Record<string, Buffer> | undefined): void {
    rmSync(join(this.tlsDir(name), endpoint), { recursive: true, force: true });
    if (files) this.writeEndpointTls(name, endpoint, files);
  }

  private writeEndpointTls(name: string, endpoint: string, files: Record<string, Buffer>): void {
    const dir = join(this.tlsDir(name), endpoint);
    privateDir(dir);
    for (const [file, bytes] of Object.entries(files)) privateFile(join(dir, file), bytes);
  }
}

/** The folder and the missing ones above it, 0700. */
function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Written to a hidden temporary name (never listed as a TLS file), 0600, then renamed over the file. */
function privateFile(path: string, data: string | Buffer): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  writeFileSync(temp, data, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}
