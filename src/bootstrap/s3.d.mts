// Types for what the tests take from s3.mjs (test/recordings/customer-s3.ts starts a second moto).

/** The Python program that runs moto's server and ends it once its parent is gone. */
export const MOTO_LAUNCHER: string;
/** The Python of the venv moto is installed in (the bootstrap installs it). */
export function venvPython(): string;
