/**
 * `--platform` as the Docker CLI reads it (containerd's platforms.Parse, then Format for the
 * `platform=` query of the create): `os[/arch[/variant]]`, a lone word an OS (this client's
 * architecture) or an architecture (this OS), names made canonical (`x86_64` is `amd64`,
 * `aarch64` is `arm64`, `armhf` is `arm/v7`...). Errors are containerd's words.
 */

interface Platform {
  os: string;
  architecture: string;
  variant: string;
}

const KNOWN_OS = ["aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "windows", "zos"];
const KNOWN_ARCH = ["386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "ppc64", "ppc64le", "loong64", "mips", "mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm"];
const OS_PATTERN = /^([A-Za-z0-9_-]+)(?:\(([A-Za-z0-9_.-]*)\))?$/;
const PART_PATTERN = /^[A-Za-z0-9_.-]+$/;

/** This client's architecture, in Go's words. */
function goArch(): string {
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

function parse(specifier: string): Platform {
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
  const p: Platform = { os: os[1].toLowerCase() === "macos" ? "darwin" : os[1].toLowerCase(), architecture: "", variant: "" };
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

/** The `platform=` value of the create for `--platform`; throws the Docker CLI's message. */
export function platformQuery(specifier: string): string {
  try {
    const p = parse(specifier);
    return [p.os, p.architecture, p.variant].filter(Boolean).join("/");
  } catch (e) {
    throw new Error(`error parsing specified platform: ${(e as Error).message}`);
  }
}
