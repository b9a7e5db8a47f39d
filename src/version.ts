import packageJson from '../package.json';

/** The running release, from package.json. */
export const VERSION: string = packageJson.version;
