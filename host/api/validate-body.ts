/**
 * Request bodies are checked with typia validators made from the TypeScript types of the API
 * (`typia.createValidate<ContainerCreateBody>()`). A body that does not fit is a 400 whose
 * message names every field that is wrong and what it should have been.
 */
import type { IValidation } from "typia";
import { errors } from "../../core/errors.js";

export type BodyValidator<T> = (input: unknown) => IValidation<T>;

export function validateBody<T>(validate: BodyValidator<T>, body: unknown): T {
  const result = validate(body);
  if (result.success) return result.data;
  const problems = result.errors.map((e) => `${fieldName(e.path)}: expected ${e.expected}, got ${describe(e.value)}`);
  throw errors.apiInvalidBody(`invalid request body: ${problems.join("; ")}`);
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
