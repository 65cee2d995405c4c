/**
 * SQL statements as values: tagged templates whose `${...}` are always parameters (`$1`, `$2`, ...),
 * nestable, with `join`, `raw` (trusted text only) and `empty`. The `sql-template-tag` library, the
 * one Prisma's own `Prisma.sql` derives from: the same statements, without loading Prisma's
 * runtime into worker processes, which run their SQL on `pg` (sql-transaction.ts, read-sql.ts).
 */
export { default as sql, empty, join, raw, Sql } from 'sql-template-tag';
