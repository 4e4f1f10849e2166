// The v1 side of the SDK test agents: it says which version it speaks, serves files and terminals nothing, and
// records what it got ($TS_AGENT_LOG, as the v2 side).
import * as v1 from "@agentclientprotocol/sdk";
import { record } from "./v2_app.mjs";

export function v1App(name) {
  let connection;
  return v1
    .agent({ name: name })
    .onConnect((opened) => {
      connection = opened;
    })
    .onRequest(v1.methods.agent.initialize, ({ params }) => {
      record(1, "initialize", params);
      return {
        protocolVersion: 1,
        agentInfo: { name: name, title: `${name} (SDK 2.4.0, v1)`, version: "2.4.0" },
        agentCapabilities: { promptCapabilities: { image: true } },
        authMethods: [],
      };
    })
    .onRequest(v1.methods.agent.session.new, ({ params }) => {
      record(1, "session/new", params);
      return { sessionId: "v1-session" };
    })
    .onNotification(v1.methods.agent.session.cancel, ({ params }) => record(1, "session/cancel", params))
    .onRequest(v1.methods.agent.session.prompt, async ({ params }) => {
      record(1, "session/prompt", params);
      await connection.client.notify(v1.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hello from ACP v1" } },
      });
      return { stopReason: "end_turn" };
    });
}

