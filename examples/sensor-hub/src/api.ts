// What the page shares with the object: types only, no platform imports.

/** One sensor's line in the live summary. */
export type SensorSummary = { last: number; min: number; max: number; mean: number; count: number; at: number };

/** The synced state browsers watch: derived from the readings table after every reading. */
export type Summary = { sensors: Record<string, SensorSummary>; readings: number };

/** The callables (`HubCallables` implements it). */
export interface HubApi {
  /** Sensors only: stores one reading. @returns how many readings this sensor has sent */
  reportReading(sensorId: string, value: number): Promise<number>;
  /** @returns the sensor's latest values, newest first */
  recent(sensorId: string, limit?: number): Promise<{ value: number; at: number }[]>;
}
