/** Asserts that `fn` throws core/network's AddressError of `kind` with `message` (exact, or matching). */
import { expect } from "chai";
import { AddressError } from "../../core/network/cidr.js";

export function expectAddressError(fn: () => unknown, kind: AddressError["kind"], message: string | RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, "an AddressError").to.be.instanceOf(AddressError);
  const err = caught as AddressError;
  expect(err.kind).to.equal(kind);
  if (typeof message === "string") expect(err.message).to.equal(message);
  else expect(err.message).to.match(message);
}
