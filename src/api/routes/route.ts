/**
 * A route, defined once for its server and its clients (Lodestar's packages/api shape): method,
 * path pattern with `:name` segments, the aliases the spec also names, and, as type parameters,
 * the answer, the request body and the query. Servers register it through
 * src/node/shared/routes.ts; clients build its URL with routeUrl. A route path spelled anywhere
 * else in src/ fails test/api/routes/route.test.ts.
 */

/** HTTP method of a route. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The `:name` segments of a path pattern, as a union of names. */
export type ParamNames<P extends string> = P extends `${string}:${infer N}/${infer Rest}` ? N | ParamNames<`/${Rest}`> : P extends `${string}:${infer N}` ? N : never;

/** The path parameters of a pattern, each a string as it arrives in the URL. */
export type PathParams<P extends string> = { [K in ParamNames<P>]: string };

/** Query parameters as a client sends them (undefined ones are left out). */
export type QueryValues = Record<string, string | number | bigint | boolean | undefined>;

/**
 * One route. `Res` is the success answer's JSON shape, `Req` the request body's (undefined: no
 * body), `Q` the query's. They exist only for the compiler; a server still validates what arrives.
 */
export interface Route<P extends string = string, Res = unknown, Req = undefined, Q extends QueryValues | undefined = undefined> {
  readonly method: HttpMethod;
  readonly path: P;
  /** Other paths served by the same handler (the spec names some routes twice). */
  readonly aliases: readonly string[];
  /** Phantom: carries the wire types; never set at run time. */
  readonly types?: { res: Res; req: Req; query: Q };
}

/**
 * Defines a route: `route<Answer, Body, Query>()('POST', '/api/v1/things/:id', ['/alias'])`.
 * Curried so the path's literal type is inferred while the wire types are given.
 */
export function route<Res = unknown, Req = undefined, Q extends QueryValues | undefined = undefined>() {
  return <const P extends string>(method: HttpMethod, path: P, aliases: readonly string[] = []): Route<P, Res, Req, Q> => ({ method, path, aliases });
}

/** Every path a route is served at: its own, then its aliases. */
export function routePaths(r: Route<string, unknown, unknown, QueryValues | undefined>): string[] {
  return [r.path, ...r.aliases];
}

/** The route's answer type. */
export type RouteAnswer<R> = R extends Route<string, infer Res, unknown, QueryValues | undefined> ? Res : never;

/**
 * The request path (and query) of a route: each `:name` replaced by its URI-encoded parameter,
 * then the query's defined values in order. A missing parameter throws: a caller bug, not input.
 */
export function routeUrl<P extends string, Q extends QueryValues | undefined>(r: Route<P, unknown, unknown, Q>, params: PathParams<P>, query?: Q): string {
  const values = params as Record<string, string>;
  const path = r.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    const v = values[name];
    if (v === undefined) throw new TypeError(`route ${r.path}: parameter ${name} is missing`);
    return encodeURIComponent(v);
  });
  if (query === undefined) return path;
  const qs = Object.entries(query)
    .filter((e): e is [string, string | number | bigint | boolean] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return qs === '' ? path : `${path}?${qs}`;
}
