export { ERROR_STATUS, statusOf, type ErrorCode } from "./codes";
export { RelayError, isRelayError, type ErrorBody } from "./relay-error";
export { ok, err, unwrap, type Result } from "./result";
