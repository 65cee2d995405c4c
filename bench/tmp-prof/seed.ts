import { migrateDatabase } from '../../src/store/migrate.ts';
import { seed } from '../graphql-api.ts';
import { createScratchDatabase } from '../lib/scratch-db.ts';
const scratch = await createScratchDatabase('metricsprof');
await migrateDatabase(scratch.connectionString);
await seed(scratch.connectionString, 50000, 3, 2, { clusters: 10 });
console.log(scratch.connectionString);
process.exit(0);
