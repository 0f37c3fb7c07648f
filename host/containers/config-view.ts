/**
 * `Config` of a container's inspect as Docker's daemon shows it: its container.Config struct,
 * every field in the struct's order, those without `omitempty` always (at their empty values
 * when the create left them out), those with it only when set. A record keeps the create's
 * body as it came: a client that sends only what it sets (Ansible's docker_container sends no
 * `Tty`) would otherwise see fields missing that Docker always has (Ansible then failed reading
 * `Config.Tty`). Keys Docker's struct does not have are not shown: Go's decoder drops them at
 * create.
 */
type Field = [key: string, empty: unknown, omitEmpty: boolean];

/** container.Config's fields in its order: the JSON key, its empty value, whether `omitempty`. */
const FIELDS: readonly Field[] = [
  ["Hostname", "", false],
  ["Domainname", "", false],
  ["User", "", false],
  ["AttachStdin", false, false],
  ["AttachStdout", false, false],
  ["AttachStderr", false, false],
  ["ExposedPorts", null, true],
  ["Tty", false, false],
  ["OpenStdin", false, false],
  ["StdinOnce", false, false],
  ["Env", null, false],
  ["Cmd", null, false],
  ["Healthcheck", null, true],
  ["ArgsEscaped", false, true],
  ["Image", "", false],
  ["Volumes", null, false],
  ["WorkingDir", "", false],
  ["Entrypoint", null, false],
  ["NetworkDisabled", false, true],
  ["MacAddress", "", true],
  ["OnBuild", null, false],
  ["Labels", null, false],
  ["StopSignal", "", true],
  ["StopTimeout", null, true],
  ["Shell", null, true],
];

/** Go's `omitempty`: false, 0, "", a nil pointer, and an empty map, slice or string. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}

export function containerConfigView(record: object): Record<string, unknown> {
  const config = record as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const [key, empty, omitEmpty] of FIELDS) {
    const value = config[key];
    // a pointer (StopTimeout) is omitted only when nil: 0 is a value
    if (omitEmpty && (key === "StopTimeout" ? value === undefined || value === null : isEmpty(value))) continue;
    out[key] = value === undefined ? empty : value;
  }
  return out;
}
