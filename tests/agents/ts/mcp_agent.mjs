// An ACP v1 agent on the official SDK that uses the MCP servers it is given: on a prompt it connects to each
// (stdio through the MCP SDK's StdioClientTransport, as the agent's own child; http through
// StreamableHTTPClientTransport), calls its `echo` tool with the prompt's text, and streams each answer as its
// message. It takes http servers (mcpCapabilities.http), not sse, and offers session/resume. What it got is recorded
// in $TS_AGENT_LOG (as the other SDK agents do).
import * as v1 from "@agentclientprotocol/sdk";
import { agentProtocolRouter } from "@agentclientprotocol/sdk/experimental/v2";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { record, serve } from "./v2_app.mjs";

const given = new Map(); // session id -> its mcpServers

function pairs(list) {
  return Object.fromEntries((list ?? []).map(({ name, value }) => [name, value]));
}

function transport(server) {
  if (server.type === "http") {
    const headers = pairs(server.headers);
    return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } });
  }
  return new StdioClientTransport({ command: server.command, args: server.args ?? [], env: pairs(server.env) });
}

async function echo(server, text) {
  const client = new Client({ name: "ts-mcp-agent", version: "1.0.0" });
  try {
    await client.connect(transport(server));
    const result = await client.callTool({ name: "echo", arguments: { message: text } });
    return result.content.map((part) => part.text ?? "").join("");
  } finally {
    await client.close();
  }
}

function said(prompt) {
  return prompt.map((block) => block.text ?? "").join("");
}

let connection;
serve(
  agentProtocolRouter().withV1(
  v1
    .agent({ name: "ts-mcp-agent" })
    .onConnect((opened) => {
      connection = opened;
    })
    .onRequest(v1.methods.agent.initialize, ({ params }) => {
      record(1, "initialize", params);
      return {
        protocolVersion: 1,
        agentInfo: { name: "ts-mcp-agent", title: "MCP test agent (SDK 2.4.0)", version: "1.0.0" },
        agentCapabilities: { mcpCapabilities: { http: true, sse: false }, sessionCapabilities: { resume: {} } },
        authMethods: [],
      };
    })
    .onRequest(v1.methods.agent.session.new, ({ params }) => {
      record(1, "session/new", params);
      given.set("mcp-session", params.mcpServers ?? []);
      return { sessionId: "mcp-session" };
    })
    .onRequest(v1.methods.agent.session.resume, ({ params }) => {
      record(1, "session/resume", params);
      given.set(params.sessionId, params.mcpServers ?? []);
      return {};
    })
    .onNotification(v1.methods.agent.session.cancel, ({ params }) => record(1, "session/cancel", params))
    .onRequest(v1.methods.agent.session.prompt, async ({ params }) => {
      record(1, "session/prompt", params);
      const text = said(params.prompt);
      for (const server of given.get(params.sessionId) ?? []) {
        let answer;
        try {
          answer = `${server.name} answered: ${await echo(server, text)}`;
        } catch (error) {
          answer = `${server.name} failed: ${error.message}`;
        }
        await connection.client.notify(v1.methods.client.session.update, {
          sessionId: params.sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: answer + "\n\n" } },
        });
      }
      return { stopReason: "end_turn" };
    }),
  ),
);
