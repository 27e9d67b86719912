/** Registers a route table entry (src/api/routes) on a Fastify server, at its path and every alias. */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { type PathParams, type QueryValues, type Route, routePaths } from '../../api/routes/route.js';

/** What a handler sees: typed path parameters, the query as strings, the body unvalidated. */
export type RouteRequest<P extends string, Q extends QueryValues | undefined> = FastifyRequest<{
  Params: PathParams<P>;
  Querystring: Q extends QueryValues ? { [K in keyof Q]?: string } : Record<string, string | undefined>;
  Body: unknown;
}>;

/** Serves one route at its path and aliases with the same options and handler. */
export function registerRoute<P extends string, Res, Req, Q extends QueryValues | undefined>(
  app: FastifyInstance,
  r: Route<P, Res, Req, Q>,
  options: RouteShorthandOptions,
  handler: (req: RouteRequest<P, Q>, reply: FastifyReply) => Promise<unknown>,
): void {
  for (const url of routePaths(r)) {
    app.route({ ...options, method: r.method, url, handler: handler as (req: FastifyRequest, reply: FastifyReply) => Promise<unknown> });
  }
}
