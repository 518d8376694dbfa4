import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// Reference values: exact evaluations of the published formulas (computed with 50-digit decimal
/// arithmetic from the published coefficients, the digits kept here), held to a relative error of
/// 1e-9; and values the sources publish themselves, held to the precision they are published at.
@Suite("Scoring formulas (pure)")
struct ScoringTests {
    func close(_ value: Double?, _ reference: Double, relative: Double = 1e-9) -> Bool {
        guard let value else { return false }
        return abs(value - reference) <= relative * abs(reference)
    }

    @Test("kcal = MET × kg × h; light < 3, moderate 3–6, vigorous > 6 (Ainsworth 2011)")
    func met() {
        #expect(close(MET.kilocalories(met: 8.0, bodyMassKg: 70, hours: 0.5), 280))
        #expect(close(MET.kilocalories(met: 3.5, bodyMassKg: 81.6, hours: 1.25), 357))
        #expect(MET.kilocalories(met: 0, bodyMassKg: 70, hours: 1) == 0)
        #expect(MET.intensity(2.9) == .light)
        #expect(MET.intensity(3.0) == .moderate)
        #expect(MET.intensity(6.0) == .moderate)
        #expect(MET.intensity(6.01) == .vigorous)
    }

    @Test("one-rep max: 100 kg × 10 reps by each formula")
    func oneRepMax() {
        let references: [(OneRepMax.Formula, Double)] = [
            (.epley, 133.33333333333333), (.brzycki, 133.33333333333333), (.lombardi, 125.89254117941672),
            (.lander, 134.07036280780879), (.mayhew, 130.93427342753152), (.oconner, 125),
            (.wathan, 134.74669948168537),
        ]
        for (formula, reference) in references {
            #expect(close(OneRepMax.estimate(weight: 100, reps: 10, formula: formula), reference), "\(formula)")
            #expect(
                OneRepMax.estimate(weight: 100, reps: 1, formula: formula) == 100, "a single repetition is the maximum")
            #expect(OneRepMax.estimate(weight: 100, reps: 0, formula: formula) == nil)
            #expect(OneRepMax.estimate(weight: 0, reps: 5, formula: formula) == nil)
        }
        #expect(
            OneRepMax.estimate(weight: 100, reps: 37, formula: .brzycki) == nil,
            "Brzycki is undefined from 37 repetitions")
    }

    @Test("Wilks (original coefficients)")
    func wilks() {
        // Published at double precision by the fitnesstools crate's documentation: men, 80 kg.
        #expect(close(StrengthPoints.wilksCoefficient(bodyweightKg: 80, sex: .male), 0.6826985901683169))
        #expect(close(StrengthPoints.wilksCoefficient(bodyweightKg: 100, sex: .male), 0.60858907190665090))
        #expect(close(StrengthPoints.wilksCoefficient(bodyweightKg: 60, sex: .male), 0.85287423659926439))
        #expect(close(StrengthPoints.wilksCoefficient(bodyweightKg: 80, sex: .female), 0.91500877160580951))
        #expect(close(StrengthPoints.wilksCoefficient(bodyweightKg: 100, sex: .female), 0.83258331673682278))
        #expect(close(StrengthPoints.wilksCoefficient(bodyweightKg: 60, sex: .female), 1.1148868752930504))
        #expect(close(StrengthPoints.wilks(totalKg: 1000, bodyweightKg: 100, sex: .male), 608.58907190665090))
        #expect(
            StrengthPoints.wilksCoefficient(bodyweightKg: 250, sex: .male)
                == StrengthPoints.wilksCoefficient(bodyweightKg: 201.9, sex: .male),
            "capped before the polynomial's pole")
    }
}
