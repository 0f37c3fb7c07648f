/**
 * A platform specifier (`os[/arch[/variant]]`) read as containerd's platforms.Parse reads it,
 * which both the Docker CLI (`--platform`) and Docker's daemon (`platform=` of a pull, an
 * import, a create) use: a lone word is an OS (this host's architecture) or an architecture
 * (this OS); names are made canonical (`x86_64` is `amd64`, `aarch64` is `arm64`, `armhf` is
 * `arm/v7`, `macos` is `darwin`). A refusal throws containerd's words, which Docker's daemon
 * passes on as they are (with errdefs' `: invalid argument` at the end).
 */

export interface ParsedPlatform {
  os: string;
  architecture: string;
  /** "" when none. */
  variant: string;
}

const KNOWN_OS = ["aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "windows", "zos"];
const KNOWN_ARCH = ["386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "ppc64", "ppc64le", "loong64", "mips", "mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm"];
const OS_PATTERN = /^([A-Za-z0-9_-]+)(?:\(([A-Za-z0-9_.-]*)\))?$/;
const PART_PATTERN = /^[A-Za-z0-9_.-]+$/;

/** This host's architecture, in Go's words. */
export function goArch(): string {
  const names: Record<string, string> = { x64: "amd64", ia32: "386", ppc64: "ppc64le" };
  return names[process.arch] ?? process.arch;
}

function normalizeArch(arch: string, variant: string): [string, string] {
  const a = arch.toLowerCase();
  const v = variant.toLowerCase();
  if (a === "i386") return ["386", ""];
  if (a === "x86_64" || a === "x86-64" || a === "amd64") return ["amd64", v === "v1" ? "" : v];
  if (a === "aarch64" || a === "arm64") return ["arm64", v === "8" || v === "v8" ? "" : v];
  if (a === "armhf") return ["arm", "v7"];
  if (a === "armel") return ["arm", "v6"];
  if (a === "arm") return ["arm", v === "" || v === "7" ? "v7" : ["5", "6", "8"].includes(v) ? `v${v}` : v];
  return [a, v];
}

function invalid(message: string): Error {
  return new Error(`${message}: invalid argument`);
}

/** Reads `specifier`; throws an Error with containerd's message when it is none. */
export function parsePlatformSpecifier(specifier: string): ParsedPlatform {
  // (Go's %q quotes as JSON does for these strings)
  const q = JSON.stringify;
  if (specifier.includes("*")) throw invalid(`${q(specifier)}: wildcards not yet supported`);
  // Go's SplitN(specifier, "/", 4): a fourth part keeps the rest, slashes and all
  const split = specifier.split("/");
  const parts = split.length > 4 ? [...split.slice(0, 3), split.slice(3).join("/")] : split;
  const os = OS_PATTERN.exec(parts[0]);
  if (!os) throw invalid(`${q(parts[0])} is an invalid OS component of ${q(specifier)}: OSAndVersion specifier component must match ${q(OS_PATTERN.source)}`);
  for (const part of parts.slice(1)) {
    if (!PART_PATTERN.test(part)) throw invalid(`${q(part)} is an invalid component of ${q(specifier)}: platform specifier component must match ${q(PART_PATTERN.source)}`);
  }
  const p: ParsedPlatform = { os: os[1].toLowerCase() === "macos" ? "darwin" : os[1].toLowerCase(), architecture: "", variant: "" };
  if (parts.length === 1) {
    if (KNOWN_OS.includes(p.os)) return { ...p, architecture: goArch() };
    const [arch, variant] = normalizeArch(parts[0], "");
    if (KNOWN_ARCH.includes(arch)) return { os: "linux", architecture: arch, variant: arch === "arm" && variant === "v7" ? "" : variant };
    throw invalid(`${q(specifier)}: unknown operating system or architecture`);
  }
  if (parts.length === 2) {
    const [arch, variant] = normalizeArch(parts[1], "");
    return { ...p, architecture: arch, variant: arch === "arm" && variant === "v7" ? "" : variant };
  }
  if (parts.length === 3) {
    const [arch, variant] = normalizeArch(parts[1], parts[2]);
    return { ...p, architecture: arch, variant: arch === "arm64" && variant === "" ? "v8" : variant };
  }
  throw invalid(`${q(specifier)}: cannot parse platform specifier`);
}

/** `os/architecture[/variant]`, containerd's Format. */
export function formatParsedPlatform(p: ParsedPlatform): string {
  return [p.os, p.architecture, p.variant].filter(Boolean).join("/");
}
