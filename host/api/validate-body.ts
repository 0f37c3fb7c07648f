/**
 * Request bodies are checked with typia validators made from the TypeScript types of the API
 * (`typia.createValidate<ContainerCreateBody>()`). A body that does not fit is a 400 whose
 * message names every field that is wrong and what it should have been.
 *
 * Before the check, the body's keys are put under the type's field names as Go's decoder
 * matches them, in any case (go-field-names.ts): a route's `BodyCheck` carries the validator and
 * the type's JSON schema, both made by typia from the type.
 *
 * A null where the type has an optional field that is not nullable counts as the field left out:
 * Docker decodes bodies with Go's encoding/json, which leaves a field at its zero value for a
 * null, and clients send nulls (docker-py's `Mount` gives every key, null for an unset Source
 * or ReadOnly). Those nulls are removed and the body checked again.
 */
import type { FastifyRequest } from "fastify";
import type { IValidation } from "typia";
import { errors } from "../../core/errors.js";
import { goFieldNames, type JsonSchemaCollection } from "./go-field-names.js";

export type BodyValidator<T> = (input: unknown) => IValidation<T>;

export interface BodyCheck<T> {
  validate: BodyValidator<T>;
  fieldNames: (body: unknown) => unknown;
}

/** `bodyCheck(typia.createValidate<T>(), typia.json.schemas<[T], "3.1">())`. */
export function bodyCheck<T>(validate: BodyValidator<T>, schemas: JsonSchemaCollection): BodyCheck<T> {
  return { validate, fieldNames: goFieldNames(schemas) };
}

/**
 * `request` given: its body must be JSON, as Docker's CheckForJSON wants for the bodies it
 * decodes (a request without a Content-Type is fine when it has no body).
 */
export function validateBody<T>(check: BodyCheck<T>, input: unknown, request?: FastifyRequest): T {
  if (request) checkJsonType(request);
  const body = check.fieldNames(input);
  let result = check.validate(body);
  if (!result.success && dropOptionalNulls(body, result.errors)) result = check.validate(body);
  if (result.success) return result.data;
  const problems = result.errors.map((e) => `${fieldName(e.path)}: expected ${e.expected}, got ${describe(e.value)}`);
  throw errors.apiInvalidBody(`invalid request body: ${problems.join("; ")}`);
}

/** Deletes the null fields typia found where it expected something or nothing; whether any went. */
function dropOptionalNulls(body: unknown, problems: IValidation.IError[]): boolean {
  let dropped = false;
  for (const e of problems) {
    if (e.value !== null || !/\bundefined\b/.test(e.expected)) continue;
    const steps = pathSteps(e.path);
    if (!steps?.length) continue;
    let at: unknown = body;
    for (const s of steps.slice(0, -1)) at = at !== null && typeof at === "object" ? (at as Record<string | number, unknown>)[s] : undefined;
    const last = steps[steps.length - 1];
    if (at !== null && typeof at === "object" && !Array.isArray(at) && (at as Record<string, unknown>)[last] === null) {
      delete (at as Record<string, unknown>)[last];
      dropped = true;
    }
  }
  return dropped;
}

/** typia's `$input.HostConfig.Mounts[0]["a.b"]` as keys and indexes; undefined for a form it does not write. */
function pathSteps(path: string): (string | number)[] | undefined {
  const steps: (string | number)[] = [];
  const rest = path.replace(/^\$input/, "");
  const step = /^(?:\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/;
  let left = rest;
  while (left !== "") {
    const m = step.exec(left);
    if (!m) return undefined;
    steps.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (JSON.parse(m[3]) as string)));
    left = left.slice(m[0].length);
  }
  return steps;
}

/** typia's `$input.HostConfig.Memory` as a client names it: `HostConfig.Memory`. */
function fieldName(path: string): string {
  const name = path.replace(/^\$input\.?/, "");
  return name === "" ? "body" : `field ${name}`;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}

export function checkJsonType(request: FastifyRequest): void {
  const type = request.headers["content-type"];
  const length = request.headers["content-length"];
  const hasBody = request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
  if (type === undefined || type === "") {
    if (hasBody) throw errors.apiBadContentType("malformed Content-Type header (): mime: no media type");
    return;
  }
  const mime = type.split(";")[0].trim().toLowerCase();
  if (mime === "") throw errors.apiBadContentType(`malformed Content-Type header (${type}): mime: no media type`);
  if (mime !== "application/json") throw errors.apiBadContentType(`unsupported Content-Type header (${type}): must be 'application/json'`);
}
