/**
 * A workflow's name, also its file name (`<name>.yaml`): `^[a-z0-9][a-z0-9_-]{0,63}$` (decisions.md
 * §4). A module of its own so the CLI checks names without loading the workflow schemas.
 */
export const WORKFLOW_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
