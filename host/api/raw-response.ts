/**
 * An answer written by hand: the headers go out at once (clients of wait and events act on
 * them before any body), and the body is the route's to write and end. Such answers bypass
 * Fastify's reply, so the authorization response check does not see them (their request
 * check has run).
 */
import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";

export function rawResponse(reply: FastifyReply, status: number, headers: Record<string, string>): ServerResponse {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(status, { ...(reply.getHeaders() as Record<string, string>), ...headers });
  res.flushHeaders();
  return res;
}
