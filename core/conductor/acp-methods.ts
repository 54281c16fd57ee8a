// Owns the types a proxy author sees for ACP methods: params and results of the requests and
// notifications a proxy most often intercepts or sends, taken from the ACP SDK's generated schema
// types (a types-only import: nothing of the SDK is loaded). Any other method is typed as plain JSON.
import type * as acp from "@agentclientprotocol/sdk";

/** A JSON object as it came off the wire. */
export type JsonObject = Record<string, unknown>;

export interface AcpRequests {
  initialize: { params: acp.InitializeRequest; result: acp.InitializeResponse };
  authenticate: { params: acp.AuthenticateRequest; result: acp.AuthenticateResponse };
  "session/new": { params: acp.NewSessionRequest; result: acp.NewSessionResponse };
  "session/load": { params: acp.LoadSessionRequest; result: acp.LoadSessionResponse };
  "session/resume": { params: acp.ResumeSessionRequest; result: acp.ResumeSessionResponse };
  "session/close": { params: acp.CloseSessionRequest; result: acp.CloseSessionResponse };
  "session/set_mode": { params: acp.SetSessionModeRequest; result: acp.SetSessionModeResponse };
  "session/prompt": { params: acp.PromptRequest; result: acp.PromptResponse };
  "session/request_permission": { params: acp.RequestPermissionRequest; result: acp.RequestPermissionResponse };
}

export interface AcpNotifications {
  "session/update": acp.SessionNotification;
  "session/cancel": acp.CancelNotification;
}

/** The params of request `M`: the SDK's type for a known method, any JSON object otherwise. */
export type RequestParams<M extends string> = M extends keyof AcpRequests ? AcpRequests[M]["params"] : JsonObject;
/** The result of request `M`: the SDK's type for a known method, unknown JSON otherwise. */
export type RequestResult<M extends string> = M extends keyof AcpRequests ? AcpRequests[M]["result"] : unknown;
export type NotificationParams<M extends string> = M extends keyof AcpNotifications ? AcpNotifications[M] : JsonObject;

/** The params of the requests that open a session (and may declare MCP servers). */
export type SessionOpenParams = acp.NewSessionRequest | acp.LoadSessionRequest | acp.ResumeSessionRequest;

export type { ContentBlock, McpServer, PermissionOption, RequestPermissionRequest, SessionModeState, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
