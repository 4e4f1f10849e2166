// A dual-version agent, as the SDK 2.4.0 protocol router makes one: v2 to a client that asks 2, v1 to one that asks 1.
import { agentProtocolRouter } from "@agentclientprotocol/sdk/experimental/v2";
import { v1App } from "./v1_app.mjs";
import { serve, v2App } from "./v2_app.mjs";

serve(agentProtocolRouter().withV1(v1App("ts-dual-agent")).withV2(v2App("ts-dual-agent")));
