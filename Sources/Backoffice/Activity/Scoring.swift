import BackofficeConsole
import BackofficePlatform
import Foundation

// Scoring formulas for ingested activity: energy from MET, estimated one-rep maximum, and
// bodyweight-relative strength points. Pure functions of doubles, no rounding: callers round for
// display only.

/// The lifter's sex, as the strength formulas distinguish it.
package enum LifterSex: String, Sendable, Codable, CaseIterable {
    case male, female
}

/// Energy expenditure from metabolic equivalents.
///
/// Source: Ainsworth B. E. et al., "2011 Compendium of Physical Activities: a second update of codes
/// and MET values", Medicine & Science in Sports & Exercise 43(8):1575–1581, 2011: one MET is
/// 1 kcal·kg⁻¹·h⁻¹, so kcal = MET × body mass (kg) × duration (h). Intensity classes as in the
/// Compendium and the U.S. Physical Activity Guidelines (2nd ed., 2018): light < 3.0 MET, moderate
/// 3.0–6.0 MET, vigorous > 6.0 MET.
package enum MET {
    package enum Intensity: String, Sendable, Codable, CaseIterable {
        case light, moderate, vigorous
    }

    /// Kilocalories spent at `met` for `hours` by a person of `bodyMassKg`.
    package static func kilocalories(met: Double, bodyMassKg: Double, hours: Double) -> Double {
        met * bodyMassKg * hours
    }

    /// The intensity class of `met`: light below 3, moderate from 3 to 6 inclusive, vigorous above 6.
    package static func intensity(_ met: Double) -> Intensity {
        if met < 3 { return .light }
        return met <= 6 ? .moderate : .vigorous
    }
}

/// Estimated one-repetition maximum from a set of `reps` repetitions at `weight` (any unit; the
/// estimate is in the same unit). Every formula gives `weight` itself for a single repetition.
///
/// Sources (as collected by LeSuer D. A. et al., "The accuracy of prediction equations for
/// estimating 1-RM performance in the bench press, squat, and deadlift", Journal of Strength and
/// Conditioning Research 11(4):211–213, 1997):
/// - Epley B., "Poundage Chart", Boyd Epley Workout, 1985: w × (1 + r / 30);
/// - Brzycki M., "Strength testing — predicting a one-rep max from reps-to-fatigue", JOPERD
///   64(1):88–90, 1993: w × 36 / (37 − r), defined for r < 37;
/// - Lombardi V. P., "Beginning Weight Training", W. C. Brown, 1989: w × r^0.10;
/// - Lander J., "Maximum based on reps", NSCA Journal 6:60–61, 1985: 100 w / (101.3 − 2.67123 r);
/// - Mayhew J. L. et al., J. Appl. Sport Sci. Res. 6:200–206, 1992: 100 w / (52.2 + 41.9 e^(−0.055 r));
/// - O'Conner B. et al., "Weight Training Today", West, 1989: w × (1 + r / 40);
/// - Wathan D., in "Essentials of Strength Training and Conditioning", 1994:
///   100 w / (48.8 + 53.8 e^(−0.075 r)).
package enum OneRepMax {
    package enum Formula: String, Sendable, Codable, CaseIterable {
        case epley, brzycki, lombardi, lander, mayhew, oconner, wathan
    }

    /// The estimate, or nil when the formula is not defined for these inputs (no repetitions, a
    /// non-positive weight, or Brzycki at 37 repetitions or more).
    package static func estimate(weight: Double, reps: Int, formula: Formula) -> Double? {
        guard reps >= 1, weight > 0 else { return nil }
        if reps == 1 { return weight }
        let r = Double(reps)
        switch formula {
        case .epley: return weight * (1 + r / 30)
        case .brzycki: return reps < 37 ? weight * 36 / (37 - r) : nil
        case .lombardi: return weight * pow(r, 0.10)
        case .lander: return 100 * weight / (101.3 - 2.67123 * r)
        case .mayhew: return 100 * weight / (52.2 + 41.9 * exp(-0.055 * r))
        case .oconner: return weight * (1 + r / 40)
        case .wathan: return 100 * weight / (48.8 + 53.8 * exp(-0.075 * r))
        }
    }
}

/// Bodyweight-relative strength points: the lifted total times a coefficient of bodyweight.
package enum StrengthPoints {
    /// The original Wilks coefficient: 500 / (a + b x + c x² + d x³ + e x⁴ + f x⁵), x = bodyweight in
    /// kg, with Robert Wilks' original coefficients (adopted by the IPF from 1994 to 2019; published
    /// in the IPF Technical Rules and reproduced at https://en.wikipedia.org/wiki/Wilks_coefficient).
    /// Bodyweight is capped where the polynomial approaches its pole (201.9 kg for men, 154.53 kg for
    /// women), as OpenPowerlifting does.
    package static func wilksCoefficient(bodyweightKg: Double, sex: LifterSex) -> Double {
        switch sex {
        case .male:
            500
                / poly5(
                    min(bodyweightKg, 201.9), -216.0475144, 16.2606339, -0.002388645, -0.00113732, 7.01863e-06,
                    -1.291e-08)
        case .female:
            500
                / poly5(
                    min(bodyweightKg, 154.53), 594.31747775582, -27.23842536447, 0.82112226871, -0.00930733913,
                    4.731582e-05, -9.054e-08)
        }
    }

    /// Wilks points: `totalKg` × the original Wilks coefficient.
    package static func wilks(totalKg: Double, bodyweightKg: Double, sex: LifterSex) -> Double {
        totalKg * wilksCoefficient(bodyweightKg: bodyweightKg, sex: sex)
    }

    /// a + b x + c x² + d x³ + e x⁴ + f x⁵, by Horner's rule.
    private static func poly5(_ x: Double, _ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double, _ f: Double)
        -> Double
    {
        a + x * (b + x * (c + x * (d + x * (e + x * f))))
    }
}
