// Database access for the suites. `npm test` starts a throwaway Postgres and passes
// its admin URL in TEST_DATABASE_URL; each test file takes its own database from it.
import { SQL } from 'bun';

export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    throw new Error('TEST_DATABASE_URL is not set: run the suites with `npm test`, which starts a throwaway Postgres');
  }
  return url;
}

/** Creates an empty, uniquely named database on the test server and returns its URL. */
export async function freshDatabase(): Promise<string> {
  const adminUrl = testDatabaseUrl();
  const name = `likeness_test_${crypto.randomUUID().replaceAll('-', '')}`;
  const admin = new SQL(adminUrl);
  try {
    // CREATE DATABASE takes no parameters; the name is generated above, never user input.
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
