/** `--platform os[/arch[/variant]]` as the API's `platform` query of load and save: an OCI platform in JSON. */
export function platformQuery(text: string): string | undefined {
  if (!text) return undefined;
  const [os, architecture, variant] = text.toLowerCase().split("/");
  return JSON.stringify({ architecture: architecture ?? "", os, ...(variant ? { variant } : {}) });
}
