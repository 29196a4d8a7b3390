// The doctor's pi.version rule: the range CI tests (floor PI_MIN_VERSION, ceiling PI_MAX_TESTED.x). Below it
// fails with an update, above it only warns, and no advice ever names an older pi.
import { describe, expect, it } from 'vitest';
import { piVersionVerdict } from '../../src/doctor/checks.js';
import { PI_MAX_TESTED, PI_MIN_VERSION } from '../../src/pi/resolve.js';

describe('piVersionVerdict', () => {
  it('the tested range is 0.85.0 … 1.6.x', () => {
    expect([PI_MIN_VERSION, PI_MAX_TESTED]).toEqual(['0.85.0', '1.6']);
  });

  it.each(['0.85.0', '0.85.9', '0.99.1', '1.0.3', '1.6.0', '1.6.14', 'v1.6.2'])('%s is ok', (version) => {
    expect(piVersionVerdict(version)).toMatchObject({ status: 'ok' });
  });

  it.each(['0.84.9', '0.80.0', '0.85.0-beta.1'])('%s is older than the floor: fail, update pi', (version) => {
    const result = piVersionVerdict(version);
    expect(result).toMatchObject({ status: 'fail', detail: `pi ${version} is older than 0.85.0` });
    expect(result.fix).toMatch(/^pi update/);
  });

  it.each(['1.7.0', '1.7.0-beta.1', '2.0.0'])(
    '%s is newer than the ceiling: a warning, never a downgrade',
    (version) => {
      const result = piVersionVerdict(version);
      expect(result).toMatchObject({
        status: 'warn',
        detail: `pi ${version} is newer than the newest pi tested (1.6.x); report problems`,
      });
      expect(result.fix ?? '').not.toMatch(/@\d|downgrade|install .*0\.85/);
    },
  );
});
