export {
  IDENTITY,
  STATE,
  STATE_ERROR,
  MCP_SERVERS,
  RPC,
  CONNECTION_ID_PARAM,
  TRANSPORT_PARAM,
  CAPNWEB,
  CLOSE_DESTROYED,
  CLOSE_INTERNAL_ERROR,
  RESERVED_CLOSE_CODES,
  CAPNWEB_PIPE,
  isRpcRequest,
  isStateFrame,
  rpcErrors,
} from "./frames";
export type {
  IdentityFrame,
  StateFrame,
  StateErrorFrame,
  McpServersFrame,
  RpcRequestFrame,
  RpcResponseFrame,
} from "./frames";
export { kebab } from "./kebab";
