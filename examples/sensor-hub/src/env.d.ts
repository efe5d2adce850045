import type { SensorHub } from "./sensor-hub";

declare global {
  interface Env {
    SensorHub: DurableObjectNamespace<SensorHub>;
  }
}
