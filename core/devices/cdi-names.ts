/**
 * CDI names (Container Device Interface): a device is asked for by its fully qualified name
 * `<vendor>/<class>=<name>` (`vendor.com/gpu=0`); a spec file's `kind` is `<vendor>/<class>`.
 * The rules are the CDI specification's: vendor and class start with a letter, end with a
 * letter or digit, and hold letters, digits, `_`, `-` and `.` between; a device name starts and
 * ends with a letter or digit and may also hold `:` between.
 */

export interface QualifiedName {
  vendor: string;
  class: string;
  name: string;
}

const LETTER = /^[A-Za-z]$/;
const ALNUM = /^[A-Za-z0-9]$/;

function checkVendorOrClass(what: "vendor" | "class", value: string): void {
  if (value === "") throw new Error(`the ${what} is empty`);
  if (!LETTER.test(value[0])) throw new Error(`${what} "${value}" must start with a letter`);
  if (!ALNUM.test(value[value.length - 1])) throw new Error(`${what} "${value}" must end with a letter or a digit`);
  const bad = [...value.slice(1, -1)].find((c) => !/[A-Za-z0-9_.-]/.test(c));
  if (bad !== undefined) throw new Error(`${what} "${value}" holds the character '${bad}'`);
}

/** Throws, saying why, for a device name (the part after `=`) CDI does not allow. */
export function checkDeviceName(name: string): void {
  if (name === "") throw new Error("the device name is empty");
  if (!ALNUM.test(name[0])) throw new Error(`device name "${name}" must start with a letter or a digit`);
  if (!ALNUM.test(name[name.length - 1])) throw new Error(`device name "${name}" must end with a letter or a digit`);
  const bad = [...name.slice(1, -1)].find((c) => !/[A-Za-z0-9_.:-]/.test(c));
  if (bad !== undefined) throw new Error(`device name "${name}" holds the character '${bad}'`);
}

/** `vendor/class` of a spec's `kind`; throws saying what is wrong. */
export function parseKind(kind: string): { vendor: string; class: string } {
  const slash = kind.indexOf("/");
  if (slash <= 0 || slash === kind.length - 1) throw new Error(`kind "${kind}" is not of the form <vendor>/<class>`);
  const vendor = kind.slice(0, slash);
  const cls = kind.slice(slash + 1);
  checkVendorOrClass("vendor", vendor);
  checkVendorOrClass("class", cls);
  return { vendor, class: cls };
}

/** `vendor/class=name`; throws saying what is wrong (a path such as `/dev/sda` is no CDI name). */
export function parseQualifiedName(device: string): QualifiedName {
  const eq = device.indexOf("=");
  if (device.startsWith("/") || eq <= 0 || eq === device.length - 1) {
    throw new Error(`"${device}" is not a qualified CDI device name (<vendor>/<class>=<name>)`);
  }
  const { vendor, class: cls } = parseKind(device.slice(0, eq));
  const name = device.slice(eq + 1);
  checkDeviceName(name);
  return { vendor, class: cls, name };
}

