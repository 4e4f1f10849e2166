// A v2-only agent (SDK 2.4.0 protocol router with v2 alone): a v1 initialize gets -32022 {requested, supported: [2]}.
import { agentProtocolRouter } from "@agentclientprotocol/sdk/experimental/v2";
import { serve, v2App } from "./v2_app.mjs";

serve(agentProtocolRouter().withV2(v2App("ts-v2-only-agent")));
