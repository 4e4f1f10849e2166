// An ACP v2 agent built with the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0, experimental/v2): the
// test agent of the client's v2 path. The prompt's first word chooses what it sends (see SCENARIOS), so that tests
// can ask for each v2 shape. Everything it receives is written to $TS_AGENT_LOG (one JSON line per message:
// {version, method, params}) so that tests can assert what the client sent. Sessions are kept in
// $TS_AGENT_STATE (a JSON file), so that a restarted agent can list, resume (and replay) and delete them.
//
// Environment: TS_AGENT_AUTH=1 asks for a sign-in (auth/login {methodId: "token"}) before session/new.
//
// The prompt's first word, and what the turn sends (every turn starts with the prompt's user_message, its messageId
// in the answer, and state_update running; it ends with state_update idle, its stopReason and background):
//   hello       agent_thought, agent_message_chunk x2 then the agent_message upsert that replaces them, usage
//   tools       tool_call_update creating a call, tool_call_content_chunk, status paused, a v2 diff (changes + git
//               patch), completed
//   permission  requires_action, session/request_permission with title, description, subject (tool_call), running
//               again; the reply says the option chosen
//   plan        plan_update {type: items, planId, entries}
//   terminal    a tool call holding a terminal; terminal_update (command, cwd, size, capabilities.cancel, output
//               snapshot), terminal_output_chunk; idle with the terminal in background (terminal/cancel ends it)
//   background  a tool call with capabilities.cancel, left running: idle lists it in background (tool_call/cancel
//               marks it cancelled)
//   commands    available_commands_update with typed commands (one with a text input), config_option_update
//   error       idle with stopReason error and its JSON-RPC error
//   refuse      session/prompt answered with an error (refused before insertion)
//   slow        runs until session/cancel: idle cancelled
//   queued      never taken in: session/prompt is answered -32800 after session/cancel
//   child       a state_update idle of another session (a subagent's), then a reply: the turn goes on
//   everything  hello, tools, plan, commands, terminal in one turn
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

export function record(version, method, params) {
  if (process.env.TS_AGENT_LOG) {
    appendFileSync(process.env.TS_AGENT_LOG, JSON.stringify({ version, method, params }) + "\n");
  }
}

function loadState() {
  const file = process.env.TS_AGENT_STATE;
  if (file && existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  return { sessions: {} };
}

function saveState(state) {
  if (process.env.TS_AGENT_STATE) writeFileSync(process.env.TS_AGENT_STATE, JSON.stringify(state));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const b64 = (text) => Buffer.from(text, "utf8").toString("base64");

function configOptions(mode) {
  return [
    {
      type: "select",
      configId: "mode",
      name: "Mode",
      category: "mode",
      currentValue: mode,
      options: [
        { value: "ask", name: "Ask" },
        { value: "code", name: "Code" },
      ],
    },
  ];
}

// What each scenario sends, after the prompt's user_message and `running`. `turn` has send(update), ask(params),
// a signal aborted by session/cancel, and the session's state. A scenario returns the idle update's fields.
const SCENARIOS = {
  async hello(turn) {
    await turn.send({ sessionUpdate: "agent_thought", messageId: "thought-1", content: [{ type: "text", text: "Thinking it over" }] });
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-1", content: { type: "text", text: "Hello " } });
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-1", content: { type: "text", text: "there" } });
    await turn.send({ sessionUpdate: "agent_message", messageId: "reply-1", content: [{ type: "text", text: "Hello from ACP v2" }] });
    return { stopReason: "end_turn", usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 } };
  },

  async tools(turn) {
    const id = "call-edit";
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId: id, title: "Edit notes.txt", kind: "edit", status: "in_progress" });
    await turn.send({ sessionUpdate: "tool_call_content_chunk", toolCallId: id, content: { type: "content", content: { type: "text", text: "Writing the notes" } } });
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId: id, status: "paused" });
    const path = `${turn.cwd}/notes.txt`;
    await turn.send({
      sessionUpdate: "tool_call_content_chunk",
      toolCallId: id,
      content: {
        type: "diff",
        changes: [{ operation: "modify", path, fileType: "text" }],
        patch: {
          format: "git_patch",
          text: `diff --git a${path} b${path}\n--- a${path}\n+++ b${path}\n@@ -1 +1 @@\n-old line\n+new line\n`,
        },
      },
    });
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId: id, status: "completed" });
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-tools", content: { type: "text", text: "Edited the notes" } });
    return { stopReason: "end_turn" };
  },

  async permission(turn) {
    const id = "call-rm";
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId: id, title: "Remove build/", kind: "delete", status: "pending" });
    await turn.send({ sessionUpdate: "state_update", state: "requires_action" });
    const answer = await turn.ask({
      title: "Remove the build folder?",
      description: "It holds 3 files made by the last build.",
      subject: { type: "tool_call", toolCall: { toolCallId: id, title: "Remove build/" } },
      options: [
        { optionId: "yes", name: "Remove it", kind: "allow_once" },
        { optionId: "no", name: "Keep it", kind: "reject_once" },
      ],
    });
    await turn.send({ sessionUpdate: "state_update", state: "running" });
    const chosen = answer.outcome?.outcome === "selected" ? answer.outcome.optionId : "cancelled";
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId: id, status: chosen === "yes" ? "completed" : "failed" });
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-perm", content: { type: "text", text: `Permission answer: ${chosen}` } });
    return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn" };
  },

  async plan(turn) {
    await turn.send({
      sessionUpdate: "plan_update",
      plan: {
        type: "items",
        planId: "plan-1",
        entries: [
          { content: "Read the code", priority: "high", status: "completed" },
          { content: "Write the fix", priority: "medium", status: "in_progress" },
        ],
      },
    });
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-plan", content: { type: "text", text: "Planned" } });
    return { stopReason: "end_turn" };
  },

  async terminal(turn) {
    const id = "call-test";
    const terminalId = "term-1";
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId: id, title: "Run the tests", kind: "execute", status: "in_progress", content: [{ type: "terminal", terminalId }] });
    await turn.send({
      sessionUpdate: "terminal_update",
      terminalId,
      command: "npm test",
      cwd: turn.cwd,
      size: { cols: 100, rows: 30 },
      capabilities: { cancel: {} },
      output: { data: b64("> tests\n") },
    });
    await turn.send({ sessionUpdate: "terminal_output_chunk", terminalId, data: b64("1 passing\n") });
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId: id, status: "completed" });
    turn.state.background = [{ type: "terminal", terminalId }];
    return { stopReason: "end_turn", background: turn.state.background };
  },

  async background(turn) {
    const id = "call-watch";
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId: id, title: "Watch the build", kind: "execute", status: "in_progress", capabilities: { cancel: {} } });
    turn.state.background = [{ type: "tool_call", toolCallId: id }];
    return { stopReason: "end_turn", background: turn.state.background };
  },

  async commands(turn) {
    await turn.send({
      sessionUpdate: "available_commands_update",
      availableCommands: [
        { type: "command", name: "review", description: "Review the changes", input: { type: "text", hint: "what to look at" } },
        { type: "command", name: "compact", description: "Shorten the conversation" },
      ],
    });
    await turn.send({ sessionUpdate: "config_option_update", configOptions: configOptions("code") });
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-commands", content: { type: "text", text: "Commands sent" } });
    return { stopReason: "end_turn" };
  },

  async error(turn) {
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-error", content: { type: "text", text: "Trying" } });
    return { stopReason: "error", error: { code: -32603, message: "The model is overloaded", data: { message: "try again in a minute" } } };
  },

  async child(turn) {
    // A subagent's session reports its own state: it ends that session's work, not this turn.
    await turn.sendTo("child-1", { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    await sleep(300);
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-child", content: { type: "text", text: "After the child" } });
    return { stopReason: "end_turn" };
  },

  async slow(turn) {
    await turn.send({ sessionUpdate: "agent_message_chunk", messageId: "reply-slow", content: { type: "text", text: "Working slowly" } });
    while (!turn.signal.aborted) await sleep(50);
    return { stopReason: "cancelled" };
  },

  async everything(turn) {
    for (const name of ["hello", "tools", "plan", "commands", "terminal"]) {
      const idle = await SCENARIOS[name](turn);
      if (name === "terminal") return idle;
    }
  },
};

/** The v2 agent app: one per connection. `name` is its info name. */
export function v2App(name) {
  const state = loadState();
  let signedIn = !process.env.TS_AGENT_AUTH;
  const turns = new Map(); // sessionId → AbortController of its running turn
  let connection;

  const send = (sessionId, update) => connection.client.notify(v2.methods.client.session.update, { sessionId, update });
  const remember = (sessionId, entry) => {
    state.sessions[sessionId].history.push(entry);
    state.sessions[sessionId].updatedAt = new Date().toISOString();
    saveState(state);
  };

  return v2
    .agent({ name })
    .onConnect((opened) => {
      connection = opened;
    })
    .onRequest(v2.methods.agent.initialize, ({ params }) => {
      record(2, "initialize", params);
      return {
        protocolVersion: 2,
        info: { name, title: `${name} (SDK 2.4.0)`, version: "2.4.0" },
        capabilities: { session: { prompt: { image: {}, embeddedContext: {} }, delete: {} } },
        authMethods: process.env.TS_AGENT_AUTH
          ? [{ methodId: "token", type: "agent", name: "Sign in with a token", description: "The test agent's own sign-in" }]
          : [],
      };
    })
    .onRequest(v2.methods.agent.auth.login, ({ params }) => {
      record(2, "auth/login", params);
      signedIn = params.methodId === "token";
      return {};
    })
    .onRequest(v2.methods.agent.auth.logout, ({ params }) => {
      record(2, "auth/logout", params);
      signedIn = false;
      return {};
    })
    .onRequest(v2.methods.agent.session.new, ({ params }) => {
      record(2, "session/new", params);
      if (!signedIn) throw v2.RequestError.authRequired();
      const sessionId = `ts-${Date.now().toString(36)}-${Object.keys(state.sessions).length + 1}`;
      state.sessions[sessionId] = { cwd: params.cwd, title: null, history: [], updatedAt: new Date().toISOString() };
      saveState(state);
      return { sessionId, configOptions: configOptions("ask") };
    })
    .onRequest(v2.methods.agent.session.list, ({ params }) => {
      record(2, "session/list", params);
      const sessions = Object.entries(state.sessions).map(([sessionId, s]) => ({
        sessionId,
        cwd: s.cwd,
        title: s.title ?? s.history.find((h) => h.role === "user")?.text ?? null,
        updatedAt: s.updatedAt,
      }));
      return { sessions };
    })
    .onRequest(v2.methods.agent.session.resume, async ({ params }) => {
      record(2, "session/resume", params);
      const session = state.sessions[params.sessionId];
      if (!session) throw v2.RequestError.resourceNotFound(params.sessionId);
      if (params.replayFrom?.type === "start") {
        for (const entry of session.history) {
          const kind = entry.role === "user" ? "user_message" : "agent_message";
          await send(params.sessionId, { sessionUpdate: kind, messageId: entry.messageId, content: [{ type: "text", text: entry.text }] });
        }
      }
      return { configOptions: configOptions("ask") };
    })
    .onRequest(v2.methods.agent.session.close, ({ params }) => {
      record(2, "session/close", params);
      turns.get(params.sessionId)?.abort();
      return {};
    })
    .onRequest(v2.methods.agent.session.delete, ({ params }) => {
      record(2, "session/delete", params);
      delete state.sessions[params.sessionId];
      saveState(state);
      return {};
    })
    .onRequest(v2.methods.agent.session.setConfigOption, ({ params }) => {
      record(2, "session/set_config_option", params);
      return { configOptions: configOptions(String(params.value)) };
    })
    .onRequest(v2.methods.agent.toolCall.cancel, async ({ params }) => {
      record(2, "tool_call/cancel", params);
      if (state.sessions[params.sessionId]) state.sessions[params.sessionId].background = [];
      await send(params.sessionId, { sessionUpdate: "tool_call_update", toolCallId: params.toolCallId, status: "cancelled", capabilities: null });
      await send(params.sessionId, { sessionUpdate: "state_update", state: "idle", background: [] });
      return {};
    })
    .onRequest(v2.methods.agent.terminal.cancel, async ({ params }) => {
      record(2, "terminal/cancel", params);
      if (state.sessions[params.sessionId]) state.sessions[params.sessionId].background = [];
      await send(params.sessionId, { sessionUpdate: "terminal_update", terminalId: params.terminalId, exitStatus: { signal: "SIGTERM" }, capabilities: null });
      await send(params.sessionId, { sessionUpdate: "state_update", state: "idle", background: [] });
      return {};
    })
    .onNotification(v2.methods.agent.session.cancel, ({ params }) => {
      record(2, "session/cancel", params);
      turns.get(params.sessionId)?.abort();
    })
    .onRequest(v2.methods.agent.session.prompt, async ({ params }) => {
      record(2, "session/prompt", params);
      const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join("");
      const word = text.trim().split(/\s+/)[0].toLowerCase();
      if (word === "refuse") throw v2.RequestError.invalidParams({ reason: "refused before insertion" }, "This prompt is refused");
      const sessionId = params.sessionId;
      if (word === "queued") {
        // Held in a queue, never taken in: a cancel ends it with the prompt's -32800 answer, as claude-agent-acp does.
        const queued = new AbortController();
        turns.set(sessionId, queued);
        while (!queued.signal.aborted) await sleep(50);
        turns.delete(sessionId);
        throw v2.RequestError.requestCancelled();
      }
      const session = state.sessions[sessionId];
      const messageId = `user-${session.history.length + 1}`;
      const scenario = SCENARIOS[word] ?? SCENARIOS.hello;
      const controller = new AbortController();
      turns.set(sessionId, controller);
      await send(sessionId, { sessionUpdate: "user_message", messageId, content: params.prompt });
      await send(sessionId, { sessionUpdate: "state_update", state: "running" });
      remember(sessionId, { role: "user", messageId, text });
      const turn = {
        cwd: session.cwd,
        state: session,
        signal: controller.signal,
        send: (update) => send(sessionId, update),
        sendTo: send,
        ask: (request) =>
          connection.client.request(v2.methods.client.session.requestPermission, { sessionId, ...request }, { signal: controller.signal }).catch(() => ({ outcome: { outcome: "cancelled" } })),
      };
      setImmediate(async () => {
        const idle = await scenario(turn);
        turns.delete(sessionId);
        remember(sessionId, { role: "agent", messageId: `agent-${session.history.length + 1}`, text: `answered ${word}` });
        const { background } = session;
        await send(sessionId, { sessionUpdate: "state_update", state: "idle", ...(background ? { background } : {}), ...idle });
      });
      return { messageId };
    });
}

/** Serves `router` on stdin/stdout. */
export function serve(router) {
  const input = new ReadableStream({
    start(controller) {
      process.stdin.on("data", (chunk) => controller.enqueue(new Uint8Array(chunk)));
      process.stdin.on("end", () => controller.close());
    },
  });
  const output = new WritableStream({
    write(chunk) {
      return new Promise((resolve) => process.stdout.write(chunk, () => resolve()));
    },
  });
  const { closed } = router.connect(v2.ndJsonStream(output, input));
  closed.then(() => process.exit(0));
}
