/**
 * The device flags of `run` and `create` as the Docker CLI reads them: `--device` (a host path
 * `[host:]container[:mode]`, or a CDI name `vendor/class=name` that becomes a device request),
 * `--device-cgroup-rule`, `--gpus` (a device request), the per-device block IO weights and
 * limits (`--blkio-weight-device /dev/sda:300`, `--device-read-bps /dev/sda:1mb`...). Errors
 * are the Docker CLI's words.
 */
import { goCleanPath } from "../../core/build/go-text.js";
import { parseQualifiedName } from "../../core/devices/cdi-names.js";
import { csvFields } from "../flags.js";
import { keyValueMap, parseBytes, parseUint } from "./units.js";

export interface DeviceMapping {
  PathOnHost: string;
  PathInContainer: string;
  CgroupPermissions: string;
}

export interface DeviceRequest {
  Driver: string;
  Count: number;
  DeviceIDs: string[] | null;
  Capabilities: string[][] | null;
  Options: Record<string, string> | null;
}

export interface WeightDevice {
  Path: string;
  Weight: number;
}

export interface ThrottleDevice {
  Path: string;
  Rate: number;
}

/** `c 1:3 rwm`: type, major:minor (`*` for any), access. */
export function validDeviceCgroupRule(v: string): string {
  if (!/^[acb] ([0-9]+|\*):([0-9]+|\*) [rwm]{1,3}$/.test(v)) throw new Error(`invalid device cgroup format '${v}'`);
  return v;
}

/** `PATH:VALUE` with PATH under /dev, as the three per-device parsers split it. */
function devicePath(v: string): [string, string] {
  const colon = v.indexOf(":");
  if (colon <= 0) throw new Error(`bad format: ${v}`);
  const path = v.slice(0, colon);
  if (!path.startsWith("/dev/")) throw new Error(`bad format for device path: ${v}`);
  return [path, v.slice(colon + 1)];
}

/** `--blkio-weight-device /dev/sda:300`: 10 to 1000, or 0. */
export function parseWeightDevice(v: string): WeightDevice {
  const [path, text] = devicePath(v);
  let weight: number;
  try {
    weight = parseUint(text, 16);
  } catch {
    throw new Error(`invalid weight for device: ${v}`);
  }
  if (weight > 0 && (weight < 10 || weight > 1000)) throw new Error(`invalid weight for device: ${v}`);
  return { Path: path, Weight: weight };
}

/** `--device-read-bps /dev/sda:1mb`: a size per second. */
export function parseThrottleBps(v: string): ThrottleDevice {
  const [path, text] = devicePath(v);
  try {
    return { Path: path, Rate: parseBytes(text) };
  } catch {
    throw new Error(`invalid rate for device: ${v}. The correct format is <device-path>:<number>[<unit>]. Number must be a positive integer. Unit is optional and can be kb, mb, or gb`);
  }
}

/** `--device-read-iops /dev/sda:100`: operations per second. */
export function parseThrottleIops(v: string): ThrottleDevice {
  const [path, text] = devicePath(v);
  try {
    return { Path: path, Rate: parseUint(text, 64) };
  } catch {
    throw new Error(`invalid rate for device: ${v}. The correct format is <device-path>:<number>. Number must be a positive integer`);
  }
}

function gpuCount(s: string): number {
  if (s === "all") return -1;
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`invalid count (${s}): value must be either "all" or an integer: invalid syntax`);
  return Number(s);
}

function gpuOptions(val: string): string[] {
  try {
    return csvFields(val);
  } catch (e) {
    throw new Error(`failed to read gpu options: ${(e as Error).message}`);
  }
}

/**
 * `--gpus all`, `--gpus 2`, `--gpus '"device=0,1",capabilities=compute'`: one device request,
 * its fields comma-separated (a CSV line), each key once; no count and no devices is one GPU.
 */
export function parseGpuRequest(value: string): DeviceRequest {
  if (value === "") throw new Error("EOF");
  const fields = csvFields(value);
  const req: DeviceRequest = { Driver: "", Count: 0, DeviceIDs: null, Capabilities: null, Options: null };
  const seen = new Set<string>();
  for (const field of fields) {
    const eq = field.indexOf("=");
    const key = eq < 0 ? field : field.slice(0, eq);
    const val = field.slice(eq + 1);
    if (seen.has(key)) throw new Error(`gpu request key '${key}' can be specified only once`);
    seen.add(key);
    if (eq < 0) {
      seen.add("count");
      req.Count = gpuCount(key);
      continue;
    }
    if (key === "driver") req.Driver = val;
    else if (key === "count") req.Count = gpuCount(val);
    else if (key === "device") req.DeviceIDs = val.split(",");
    else if (key === "capabilities") req.Capabilities = [[...val.split(","), "gpu"]];
    else if (key === "options") req.Options = keyValueMap(gpuOptions(val));
    else throw new Error(`unexpected key '${key}' in '${field}'`);
  }
  if (!seen.has("count") && req.DeviceIDs === null) req.Count = 1;
  req.Options ??= {};
  req.Capabilities ??= [["gpu"]];
  return req;
}

/** r, w and m, each at most once. */
function validDeviceMode(mode: string): boolean {
  return mode !== "" && [...mode].every((c, i) => "rwm".includes(c) && mode.indexOf(c) === i);
}

/** `[host:]container[:mode]` for a Linux daemon: the Docker CLI's validateLinuxPath, then parseLinuxDevice. */
function linuxDevice(value: string): DeviceMapping {
  const split = value.split(":");
  if (split.length > 3 || split[0] === "") throw new Error(`bad format for path: ${value}`);
  let containerPath: string;
  let validated: string;
  if (split.length === 1) {
    containerPath = split[0];
    validated = goCleanPath(containerPath);
  } else if (split.length === 2) {
    if (validDeviceMode(split[1])) {
      containerPath = split[0];
      validated = `${goCleanPath(containerPath)}:${split[1]}`;
    } else {
      containerPath = split[1];
      validated = `${split[0]}:${goCleanPath(containerPath)}`;
    }
  } else {
    containerPath = split[1];
    if (!validDeviceMode(split[2])) throw new Error(`bad mode specified: ${split[2]}`);
    validated = value;
  }
  if (!containerPath.startsWith("/")) throw new Error(`${containerPath} is not an absolute path`);
  const parts = validated.split(":");
  let permissions = "rwm";
  let dst = "";
  if (parts.length === 3) permissions = parts[2];
  if (parts.length >= 2) {
    if (validDeviceMode(parts[1])) permissions = parts[1];
    else dst = parts[1];
  }
  return { PathOnHost: parts[0], PathInContainer: dst || parts[0], CgroupPermissions: permissions };
}

function isCdiName(device: string): boolean {
  try {
    parseQualifiedName(device);
    return true;
  } catch {
    return false;
  }
}

/** `--device` values: host devices, and the CDI names as one `cdi` device request after the `--gpus` ones. */
export function parseDevices(values: readonly string[], gpus: readonly string[]): { devices: DeviceMapping[]; requests: DeviceRequest[] | null } {
  const cdi = values.filter(isCdiName);
  const devices = values.filter((v) => !isCdiName(v)).map(linuxDevice);
  const requests = gpus.map(parseGpuRequest);
  if (cdi.length) requests.push({ Driver: "cdi", Count: 0, DeviceIDs: cdi, Capabilities: null, Options: null });
  return { devices, requests: requests.length ? requests : null };
}
