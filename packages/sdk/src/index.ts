/** The public API of `@scienceevolve/sdk`: named exports only. */
export { SdkError, isSdkError, toSdkError, ERROR_CODES } from './errors.js';
export type { ErrorCode, SdkErrorOptions } from './errors.js';
