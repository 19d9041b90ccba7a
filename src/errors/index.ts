export { ERROR_STATUS, type ErrorCode, statusOf } from "./codes";
export { type ErrorBody, isRelayError, RelayError } from "./relay-error";
export { err, ok, type Result, unwrap } from "./result";
