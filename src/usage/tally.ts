import { hourOf } from "../quotas/windows";
import { addUsage, emptyUsage, isEmpty, type Usage } from "./counts";

/**
 * What an isolate counted and has not yet handed to the tenants' objects: per tenant, per
 * hour. Counting is in memory, so a request costs no write and no call; the meter
 * (src/services/usage-meter.ts) takes the tally at most once a second.
 */

export interface TenantHours {
  tenant: string;
  /** Hours since the epoch, each with what was counted in it. */
  hours: { hour: number; usage: Usage }[];
}

export class UsageTally {
  private tenants = new Map<string, Map<number, Usage>>();

  add(tenant: string, at: number, usage: Usage): void {
    if (isEmpty(usage)) return;
    const hours = this.tenants.get(tenant) ?? new Map<number, Usage>();
    this.tenants.set(tenant, hours);
    const hour = hourOf(at);
    const held = hours.get(hour) ?? emptyUsage();
    hours.set(hour, addUsage(held, usage));
  }

  /** Everything counted since the last take, by tenant; the tally starts again empty. */
  take(): TenantHours[] {
    const taken = [...this.tenants].map(([tenant, hours]) => ({
      tenant,
      hours: [...hours].map(([hour, usage]) => ({ hour, usage })),
    }));
    this.tenants = new Map();
    return taken;
  }

  /** A tenant's counts that could not be handed over are counted again, with what came since. */
  putBack(batch: TenantHours): void {
    for (const { hour, usage } of batch.hours) this.add(batch.tenant, hour * 3_600_000, usage);
  }

  get size(): number {
    return this.tenants.size;
  }
}
