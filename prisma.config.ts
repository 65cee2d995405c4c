// Prisma CLI configuration. Run the CLI through `npm run prisma -- <command>`, which points Prisma at
// the bundled WebAssembly schema engine so nothing is downloaded (see scripts/prisma.mjs).
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/phaselog_dev' },
});
