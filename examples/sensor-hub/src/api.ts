// What the page shares with the object: types and one constant, no platform imports.

/** One sensor's line in the live summary. */
export type SensorSummary = { last: number; min: number; max: number; mean: number; count: number; at: number };

/** Readings above this raise an alert. */
export const ALERT_ABOVE = 40;

/** A reading outside the normal range, raised through the hub's Queue. */
export type Alert = { sensorId: string; value: number; at: number };

/** The synced state browsers watch: derived from the readings table after every reading. */
export type Summary = { sensors: Record<string, SensorSummary>; readings: number; alerts: Alert[] };

/** One sensor's readings in one minute, rolled up by the hub's Scheduler. */
export type MinuteRollup = { minute: number; count: number; min: number; max: number; mean: number };

/** The callables (`HubCallables` implements it). */
export interface HubApi {
  /** Sensors only: stores one reading. @returns how many readings this sensor has sent */
  reportReading(sensorId: string, value: number): Promise<number>;
  /** @returns the sensor's latest values, newest first */
  recent(sensorId: string, limit?: number): Promise<{ value: number; at: number }[]>;
  /** @returns the sensor's per-minute rollups (`minute` is ms since epoch), newest first */
  history(sensorId: string, minutes?: number): Promise<MinuteRollup[]>;
}
