/**
 * A stream of JSON values, one a line, as the daemon writes `/events` and `/containers/{id}/stats`
 * (the Docker CLI reads them with a json.Decoder): each value as soon as its line is complete,
 * with the line's text (for numbers JSON.parse would round).
 */
export async function* jsonLines<T>(body: AsyncIterable<Buffer>): AsyncGenerator<{ value: T; raw: string }> {
  let pending = "";
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const raw = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (raw !== "") yield { value: JSON.parse(raw) as T, raw };
    }
  }
  const rest = (pending + decoder.decode()).trim();
  if (rest !== "") yield { value: JSON.parse(rest) as T, raw: rest };
}
