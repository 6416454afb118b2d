/**
 * A Kysely plugin giving better-auth `Date`s where the MikroORM drivers hand it strings (see the class).
 */
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/**
 * Turns the timestamp columns of better-auth's tables back into `Date`s. MikroORM's PostgreSQL and PGlite
 * connections keep `timestamptz` values as strings, while better-auth compares them with `Date`s
 * (`expiresAt < new Date()`), which is always false for a string: codes and sessions would never expire and
 * the JWT plugin throws on `expiresAt.getTime()`. Only the named columns are touched, and only string values.
 */
export class DateColumnsPlugin implements KyselyPlugin {
  columns: ReadonlySet<string> = new Set();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const rows = args.result.rows;
    if (rows.length === 0 || this.columns.size === 0) return args.result;
    return { ...args.result, rows: rows.map((row) => this.convert(row)) };
  }

  private convert(row: UnknownRow): UnknownRow {
    let out: Record<string, unknown> | undefined;
    for (const [key, value] of Object.entries(row)) {
      if (typeof value !== 'string') continue;
      // Joined rows arrive as `_joined_<model>_<field>`.
      const column = key.startsWith('_joined_') ? key.slice(key.lastIndexOf('_') + 1) : key;
      if (!this.columns.has(column)) continue;
      const date = new Date(value);
      if (Number.isNaN(date.getTime())) continue;
      out ??= { ...row };
      out[key] = date;
    }
    return out ?? row;
  }
}
