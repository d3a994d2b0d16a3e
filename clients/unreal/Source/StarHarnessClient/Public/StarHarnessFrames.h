// The down frames of star-harness protocol v1 as USTRUCTs, filled by FJsonObjectConverter.
// Property names match the wire's camelCase names case-insensitively (NpcName <- "npcName").
// The HUD is game-defined, so it is kept as JSON text here; a game can declare its own
// USTRUCT for it and convert DataJson with FJsonObjectConverter::JsonObjectStringToUStruct.
// In a scene (several NPCs in one encounter, OpenScene) every frame that speaks names its NPC
// in SpeakerId ("speakerId"); outside a scene SpeakerId is empty. In a shared scene (revision 3)
// another player's line has their id in SpeakerId and their name in SpeakerName.
#pragma once

#include "CoreMinimal.h"
#include "StarHarnessFrames.generated.h"

USTRUCT(BlueprintType)
struct FStarHarnessNpc
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString Name;
	UPROPERTY(BlueprintReadOnly) FString LocationId;
};

/** What makes an option an offer: accepting it commits Action, which takes Cost from the player. */
USTRUCT(BlueprintType)
struct FStarHarnessOfferTerms
{
	GENERATED_BODY()
	/** The game action that accepting the offer commits. */
	UPROPERTY(BlueprintReadOnly) FString Action;
	/** What the player gives, in the game's words ("3,300 cr", "2 fuel cells"); may be empty. */
	UPROPERTY(BlueprintReadOnly) FString Cost;
};

USTRUCT(BlueprintType)
struct FStarHarnessOption
{
	GENERATED_BODY()
	/** Send this back with SayOption. */
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString Label;
	/** True when picking this option accepts an offer the NPC made (a trade that takes from
	 *  the player): show it apart, with Offer.Cost and an Accept button. Filled by hand. */
	UPROPERTY(BlueprintReadOnly) bool bIsOffer = false;
	/** "offer" on the wire; empty unless bIsOffer. */
	UPROPERTY(BlueprintReadOnly) FStarHarnessOfferTerms Offer;
};

/** One NPC of a scene, as encounter.opened lists them. */
USTRUCT(BlueprintType)
struct FStarHarnessSceneNpc
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString Name;
	UPROPERTY(BlueprintReadOnly) int32 Attitude = 0;
};

/** welcome: answers hello. */
USTRUCT(BlueprintType)
struct FStarHarnessWelcome
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) int32 Protocol = 0;
	/** The additions the server speaks (2: scenes, 3: scenes several players share); a server
	 *  that names none is revision 1. */
	UPROPERTY(BlueprintReadOnly) int32 Revision = 1;
	UPROPERTY(BlueprintReadOnly) TArray<FStarHarnessNpc> Npcs;
	/** The player's HUD as JSON text (game-defined shape). */
	UPROPERTY(BlueprintReadOnly) FString HudJson;
};

/** encounter.opened: show the NPC at once, before any line arrives. */
USTRUCT(BlueprintType)
struct FStarHarnessEncounterOpened
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString NpcName;
	UPROPERTY(BlueprintReadOnly) int32 Attitude = 0;
	/** In a scene: the NPC who holds the floor first. */
	UPROPERTY(BlueprintReadOnly) FString SpeakerId;
	/** In a scene: every NPC in it (empty outside a scene). */
	UPROPERTY(BlueprintReadOnly) TArray<FStarHarnessSceneNpc> Npcs;
};

/** say.delta: append Text to the line of SpeakerId (in a scene) or of the NPC. */
USTRUCT(BlueprintType)
struct FStarHarnessSayDelta
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString Text;
	UPROPERTY(BlueprintReadOnly) FString SpeakerId;
	/** In a shared scene: the name of the other player whose line this is (show it apart from
	 *  the NPCs'); empty for an NPC's line. */
	UPROPERTY(BlueprintReadOnly) FString SpeakerName;
};

/** say.end: the line is complete; Mood is one of the game's moods. */
USTRUCT(BlueprintType)
struct FStarHarnessSayEnd
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString Mood;
	UPROPERTY(BlueprintReadOnly) FString SpeakerId;
};

/** options: replaces earlier options; empty means free text only. In a scene they are lines
 *  to SpeakerId. */
USTRUCT(BlueprintType)
struct FStarHarnessOptions
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) TArray<FStarHarnessOption> Items;
	UPROPERTY(BlueprintReadOnly) FString SpeakerId;
};

/** action: presentation only, the change is already committed (bOk false: refused). */
USTRUCT(BlueprintType)
struct FStarHarnessAction
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString Name;
	/** "ok" on the wire; filled by hand because of the b prefix. */
	UPROPERTY(BlueprintReadOnly) bool bOk = false;
	UPROPERTY(BlueprintReadOnly) FString Summary;
	UPROPERTY(BlueprintReadOnly) FString SpeakerId;
};

/** encounter.idle: the turn is over; accept input again. */
USTRUCT(BlueprintType)
struct FStarHarnessEncounterIdle
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
};

/** One player of a shared scene, as scene.players lists them. */
USTRUCT(BlueprintType)
struct FStarHarnessScenePlayer
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString Name;
};

/** scene.players (revision 3): who is in a shared scene now, the player among them; sent when
 * a player joins or leaves. Compare with the last to say who came or went. */
USTRUCT(BlueprintType)
struct FStarHarnessScenePlayers
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) TArray<FStarHarnessScenePlayer> Players;
};

/** error: Id is empty when no encounter is concerned; Code is from a closed set. */
USTRUCT(BlueprintType)
struct FStarHarnessError
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString Id;
	UPROPERTY(BlueprintReadOnly) FString Code;
	UPROPERTY(BlueprintReadOnly) FString Message;
};

/** world.event: news for a ticker. */
USTRUCT(BlueprintType)
struct FStarHarnessWorldEvent
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString LocationId;
	UPROPERTY(BlueprintReadOnly) FString Headline;
};

/** hud: replace the whole HUD of PlayerId. */
USTRUCT(BlueprintType)
struct FStarHarnessHud
{
	GENERATED_BODY()
	UPROPERTY(BlueprintReadOnly) FString PlayerId;
	/** The game-defined data object as JSON text. */
	UPROPERTY(BlueprintReadOnly) FString DataJson;
};
