/// The words generated exercises are made of: the real catalog's body parts, targets and
/// equipment, and movements that fit each target, so generated listings read like real ones.
///
/// ```swift
/// let movement = ExerciseVocabulary.movements[0]   // target "abs", body part "waist", …
/// ```
enum ExerciseVocabulary {
    /// A family of movements that train one target muscle.
    struct Movement {
        let target: String
        let bodyPart: String
        let category: String
        let names: [String]
        let equipment: [String]
    }

    static let movements: [Movement] = [
        Movement(
            target: "abs", bodyPart: "waist", category: "strength",
            names: ["crunch", "sit-up", "v-up", "russian twist", "leg raise", "side bend"],
            equipment: ["body weight", "dumbbell", "cable", "medicine ball", "stability ball"]),
        Movement(
            target: "biceps", bodyPart: "upper arms", category: "strength",
            names: ["curl", "hammer curl", "concentration curl", "preacher curl"],
            equipment: ["dumbbell", "barbell", "ez barbell", "cable", "band"]),
        Movement(
            target: "triceps", bodyPart: "upper arms", category: "strength",
            names: ["kickback", "pushdown", "skull crusher", "overhead extension"],
            equipment: ["dumbbell", "cable", "ez barbell", "body weight", "resistance band"]),
        Movement(
            target: "pectorals", bodyPart: "chest", category: "strength",
            names: ["bench press", "fly", "push-up", "press"],
            equipment: ["barbell", "dumbbell", "smith machine", "leverage machine", "body weight"]),
        Movement(
            target: "serratus anterior", bodyPart: "chest", category: "strength",
            names: ["scapula push-up", "incline scapula push-up"],
            equipment: ["body weight", "smith machine"]),
        Movement(
            target: "lats", bodyPart: "back", category: "strength",
            names: ["pulldown", "pull-up", "row", "pullover"],
            equipment: ["cable", "body weight", "leverage machine", "assisted", "dumbbell"]),
        Movement(
            target: "upper back", bodyPart: "back", category: "strength",
            names: ["reverse fly", "face pull", "bent over row"],
            equipment: ["dumbbell", "cable", "band", "barbell"]),
        Movement(
            target: "traps", bodyPart: "back", category: "strength",
            names: ["shrug", "upright row"],
            equipment: ["barbell", "dumbbell", "trap bar", "smith machine"]),
        Movement(
            target: "spine", bodyPart: "back", category: "mobility",
            names: ["hyperextension", "cat cow", "back extension"],
            equipment: ["body weight", "stability ball", "roller"]),
        Movement(
            target: "delts", bodyPart: "shoulders", category: "strength",
            names: ["shoulder press", "lateral raise", "front raise", "arnold press"],
            equipment: ["dumbbell", "barbell", "cable", "kettlebell", "band"]),
        Movement(
            target: "quads", bodyPart: "upper legs", category: "strength",
            names: ["squat", "lunge", "leg extension", "step-up", "leg press"],
            equipment: ["barbell", "dumbbell", "body weight", "sled machine", "kettlebell"]),
        Movement(
            target: "hamstrings", bodyPart: "upper legs", category: "strength",
            names: ["leg curl", "romanian deadlift", "good morning", "hamstring stretch"],
            equipment: ["leverage machine", "barbell", "dumbbell", "band", "olympic barbell"]),
        Movement(
            target: "glutes", bodyPart: "upper legs", category: "strength",
            names: ["hip thrust", "glute bridge", "donkey kick", "split squat"],
            equipment: ["barbell", "body weight", "cable", "bosu ball", "band"]),
        Movement(
            target: "abductors", bodyPart: "upper legs", category: "strength",
            names: ["hip abduction", "side lying leg raise"],
            equipment: ["leverage machine", "cable", "band", "body weight"]),
        Movement(
            target: "adductors", bodyPart: "upper legs", category: "stretching",
            names: ["hip adduction", "butterfly stretch"],
            equipment: ["leverage machine", "cable", "body weight"]),
        Movement(
            target: "calves", bodyPart: "lower legs", category: "strength",
            names: ["calf raise", "ankle circles", "donkey calf raise"],
            equipment: ["body weight", "smith machine", "leverage machine", "dumbbell", "weighted"]),
        Movement(
            target: "forearms", bodyPart: "lower arms", category: "strength",
            names: ["wrist curl", "reverse wrist curl", "wrist roller"],
            equipment: ["barbell", "dumbbell", "cable", "wheel roller"]),
        Movement(
            target: "cardiovascular system", bodyPart: "cardio", category: "cardio",
            names: ["jumping jack", "burpee", "mountain climber", "run", "jump rope"],
            equipment: [
                "body weight", "rope", "stationary bike", "elliptical machine",
                "stepmill machine", "skierg machine", "upper body ergometer"
            ]),
        Movement(
            target: "levator scapulae", bodyPart: "neck", category: "stretching",
            names: ["neck side stretch", "side push neck stretch"],
            equipment: ["body weight"])
    ]

    /// How a movement is varied in a name: "incline dumbbell fly", "single arm cable row", ….
    static let modifiers = [
        "", "", "", "incline", "decline", "seated", "standing", "single arm", "alternate",
        "wide grip", "close grip", "reverse grip", "kneeling", "lying", "weighted"
    ]

    /// Names with the awkward characters real names hold (`/`, `°`, `(`), used for a few of the
    /// first exercises so even tiny catalogs carry them.
    static let awkwardNames: [(name: String, movement: Int, equipment: String)] = [
        ("45° side bend", 0, "body weight"),
        ("3/4 sit-up", 0, "body weight"),
        ("sled 45° leg press", 10, "sled machine"),
        ("assisted (towel) hamstring stretch", 11, "assisted (towel)"),
        ("dumbbell / exercise ball fly", 3, "dumbbell, exercise ball"),
        ("über crunch (café variation)", 0, "body weight")
    ]

    static let secondaryMuscles = [
        "shoulders", "triceps", "biceps", "forearms", "core", "lower back", "hip flexors",
        "hamstrings", "glutes", "quadriceps", "calves", "obliques", "rhomboids", "trapezius",
        "rear deltoids", "chest", "ankle stabilizers", "brachialis"
    ]

    static let difficulties = ["beginner", "intermediate", "advanced"]

    static let instructionTemplates = [
        "Set up with the %E and brace your core.",
        "Start in a stable position with your feet shoulder-width apart.",
        "Perform the %M in a slow, controlled motion, focusing on your %T.",
        "Pause for a moment at the point of peak contraction.",
        "Return to the starting position without letting the weight drop.",
        "Keep your back neutral and your breathing steady throughout.",
        "Repeat for the desired number of repetitions."
    ]
}
